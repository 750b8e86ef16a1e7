import BluewireATT
import BluewireCore

/// A sans-I/O GATT server: ATT request bytes in, response bytes out (Core Vol 3 Part F and Part G).
///
/// The host feeds every ATT PDU a client sends to `handle(_:from:)` and sends back what it returns
/// (or, behind an `ATTBearer` that already decodes and polices PDUs, passes its `.request`/`.command`
/// events to `respond(to:from:)`); it calls `notify`/`indicate` to push values and sends the PDUs
/// they return; it drains `takeEvents()` after each call to learn about subscriptions and writes. Connections are HCI
/// connection handles; state for one is created on `connect` (or the first PDU) and dropped on
/// `disconnect`. Nothing here reads a clock: the 30-second transaction timeout of §3.3.3 belongs to
/// the bearer, which disconnects, and `disconnect` then clears the indication state.
///
/// Every request gets exactly one response or Error Response; commands and unknown commands get none.
/// A hostile client cannot grow state: prepare queues, indication queues and the event buffer are
/// bounded by `GATTServerConfiguration`.
public struct GATTServer: Sendable {
    /// ATT_MTU before any exchange, and the smallest allowed (Core Vol 3 Part F §3.2.8).
    public static let defaultMTU = 23

    /// The attribute table served. Changing it while clients are connected is allowed (e.g. new
    /// cached values); changing its structure should be followed by a Service Changed indication.
    public var database: GATTDatabase
    public let configuration: GATTServerConfiguration
    var connections: LinearMap<UInt16, GATTServerConnection> = LinearMap()
    var events: [GATTServerEvent] = []
    /// Events lost because nobody called `takeEvents()` in time.
    public private(set) var droppedEventCount = 0

    public init(database: GATTDatabase, configuration: GATTServerConfiguration = GATTServerConfiguration()) {
        self.database = database
        self.configuration = configuration
    }

    // MARK: connections

    /// Starts serving a connection. `clientConfigurations` restores a bonded client's CCCD values
    /// (descriptor handle → value), which Part G §3.3.3.3 requires to persist across connections.
    public mutating func connect(
        _ connection: UInt16, securityLevel: GATTSecurityLevel = .none,
        clientConfigurations: LinearMap<UInt16, UInt16> = LinearMap()
    ) {
        var state = GATTServerConnection(securityLevel: securityLevel)
        for (handle, value) in clientConfigurations where database.characteristic(clientConfigurationHandle: handle) != nil {
            state.clientConfigurations[handle] = value
        }
        connections[connection] = state
    }

    /// Forgets a connection: its MTU, subscriptions, prepare queue and indications.
    public mutating func disconnect(_ connection: UInt16) {
        connections[connection] = nil
    }

    /// Records the link's new security (after pairing or encryption), which permission checks use.
    public mutating func setSecurityLevel(_ level: GATTSecurityLevel, for connection: UInt16) {
        connections[connection, default: GATTServerConnection(securityLevel: level)].securityLevel = level
    }

    /// The ATT_MTU in force on a connection (23 if unknown or not exchanged).
    public func mtu(for connection: UInt16) -> Int {
        connections[connection]?.mtu ?? GATTServer.defaultMTU
    }

    /// A connection's CCCD values by descriptor handle (to store for a bonded client).
    /// What the client on `connection` wrote to Client Supported Features (Core Vol 3 Part G §7.2),
    /// empty until it writes: bit 0 Robust Caching, bit 1 Enhanced ATT, bit 2 Multiple Handle Value
    /// Notifications (`GATTClientFeatures`).
    public func clientSupportedFeatures(for connection: UInt16) -> [UInt8] {
        connections[connection]?.clientSupportedFeatures ?? []
    }

    public func clientConfigurations(for connection: UInt16) -> LinearMap<UInt16, UInt16> {
        connections[connection]?.clientConfigurations ?? LinearMap()
    }

    /// The client's configuration of the characteristic whose value is at `valueHandle` (0 if none).
    public func subscription(connection: UInt16, valueHandle: UInt16) -> GATTSubscription {
        var configuration: UInt16 = 0
        if let descriptor = database.characteristic(valueHandle: valueHandle)?.clientConfigurationHandle {
            configuration = connections[connection]?.clientConfigurations[descriptor] ?? 0
        }
        return GATTSubscription(connection: connection, valueHandle: valueHandle, configuration: configuration)
    }

    /// How many prepared writes a connection has queued (for tests and diagnostics).
    public func preparedWriteCount(for connection: UInt16) -> Int {
        connections[connection]?.preparedWrites.count ?? 0
    }

    /// How many indications wait behind the outstanding one on a connection.
    public func queuedIndicationCount(for connection: UInt16) -> Int {
        connections[connection]?.pendingIndications.count ?? 0
    }

    /// How many connections have state.
    public var connectionCount: Int { connections.count }

    // MARK: events

    /// The events since the last call, oldest first.
    public mutating func takeEvents() -> [GATTServerEvent] {
        let taken = events
        events = []
        return taken
    }

    mutating func emit(_ event: GATTServerEvent) {
        guard events.count < configuration.maximumPendingEvents else {
            droppedEventCount += 1
            return
        }
        events.append(event)
    }

    // MARK: requests

    /// Handles one ATT PDU from a client and returns the PDU to send back on that connection, if any:
    /// the response or Error Response to a request, nothing for a command, and for a Handle Value
    /// Confirmation the next queued indication (if one was waiting).
    ///
    /// Malformed requests, and requests longer than ATT_MTU (§3.2.8), get Invalid PDU; unknown
    /// requests Request Not Supported (§3.4.1.1). PDUs of the client role (responses, notifications,
    /// indications), empty PDUs and unknown commands are ignored (§3.3.2).
    public mutating func handle(_ pdu: ArraySlice<UInt8>, from connection: UInt16) -> [UInt8]? {
        guard let first = pdu.first else { return nil }
        let opcode = ATTOpcode(first)
        if connections[connection] == nil { connections[connection] = GATTServerConnection(securityLevel: .none) }
        if opcode == .handleValueConfirmation { return confirm(connection: connection)?.bytes }
        let isRequest = GATTServer.requestOpcodes.contains(opcode)
        guard isRequest || opcode == .writeCommand else {
            if GATTServer.isUnknown(opcode) && !opcode.isCommand {
                return errorResponse(opcode, 0, .requestNotSupported).encode()
            }
            return nil
        }
        let mtu = connections[connection]?.mtu ?? GATTServer.defaultMTU
        // Refusing PDUs over ATT_MTU also caps what a client can make the server copy.
        guard pdu.count <= mtu, let decoded = try? ATTPDU(decoding: pdu) else {
            return isRequest ? errorResponse(opcode, 0, .invalidPDU).encode() : nil
        }
        return respond(to: decoded, from: connection)?.encode()
    }

    /// Handles one ATT PDU given as an array (see `handle(_:from:)` for slices).
    public mutating func handle(_ pdu: [UInt8], from connection: UInt16) -> [UInt8]? {
        handle(pdu[...], from: connection)
    }

    /// Answers an already decoded request from a client: the response or Error Response, or nil for a
    /// command (which is carried out) and for anything that is not a request.
    ///
    /// This is the entry point behind an `ATTBearer`, which decodes PDUs, answers malformed and
    /// unknown requests and Exchange MTU itself, and passes the rest on as `.request`/`.command`
    /// events: give the result to `ATTBearer.respond(_:)`, report the bearer's `mtuChanged` with
    /// `setMTU(_:for:)`, and its `indicationConfirmed` with `confirm(connection:)`. A Signed Write
    /// Command is ignored: this server holds no signing key (Core Vol 3 Part H §2.4.5), and a signed
    /// write that cannot be verified must not be applied.
    public mutating func respond(to request: ATTPDU, from connection: UInt16) -> ATTPDU? {
        if connections[connection] == nil { connections[connection] = GATTServerConnection(securityLevel: .none) }
        switch request {
        case .exchangeMTURequest(let clientMTU):
            return exchangeMTU(clientMTU, connection)
        case .findInformationRequest(let start, let end):
            return findInformation(start, end, connection)
        case .findByTypeValueRequest(let start, let end, let type, let value):
            return findByTypeValue(start, end, type, value, connection)
        case .readByTypeRequest(let start, let end, let type):
            return readByType(start, end, type, connection)
        case .readByGroupTypeRequest(let start, let end, let type):
            return readByGroupType(start, end, type, connection)
        case .readRequest(let handle):
            return read(handle, offset: 0, opcode: .readRequest, connection)
        case .readBlobRequest(let handle, let offset):
            return read(handle, offset: Int(offset), opcode: .readBlobRequest, connection)
        case .readMultipleRequest(let handles):
            return readMultiple(handles, variable: false, connection)
        case .readMultipleVariableRequest(let handles):
            return readMultiple(handles, variable: true, connection)
        case .writeRequest(let handle, let value):
            return writeRequest(handle, value, connection)
        case .writeCommand(let handle, let value):
            writeCommand(handle, value, connection)
            return nil
        case .prepareWriteRequest(let handle, let offset, let value):
            return prepareWrite(handle, Int(offset), value, connection)
        case .executeWriteRequest(let flags):
            return executeWrite(flags, connection)
        case .unknown(let opcode, _) where !opcode.isCommand:
            return errorResponse(opcode, 0, .requestNotSupported)
        default:
            return nil
        }
    }

    /// Sets the ATT_MTU of a connection whose MTU exchange something else (an `ATTBearer`) answered.
    /// Values are clamped to 23...`configuration.serverMTU`.
    public mutating func setMTU(_ mtu: Int, for connection: UInt16) {
        let clamped = min(max(mtu, GATTServer.defaultMTU), configuration.serverMTU)
        connections[connection, default: GATTServerConnection(securityLevel: .none)].mtu = clamped
        connections[connection]?.mtuExchanged = true
    }

    /// The requests a server answers (Core Vol 3 Part F §3.4.8, Table 3.37).
    static let requestOpcodes: [ATTOpcode] = [
        .exchangeMTURequest, .findInformationRequest, .findByTypeValueRequest, .readByTypeRequest,
        .readRequest, .readBlobRequest, .readMultipleRequest, .readByGroupTypeRequest,
        .readMultipleVariableRequest, .writeRequest, .prepareWriteRequest, .executeWriteRequest,
    ]

    /// Whether `opcode` is none of the PDUs ATT defines (so an unknown request or command).
    static func isUnknown(_ opcode: ATTOpcode) -> Bool {
        switch opcode.rawValue {
        case 0x01...0x13, 0x16...0x19, 0x1B, 0x1D, 0x1E, 0x20...0x21, 0x23, 0x52, 0xD2: return false
        default: return true
        }
    }

    /// An Error Response (§3.4.1.1).
    func errorResponse(_ opcode: ATTOpcode, _ handle: UInt16, _ error: ATTErrorCode) -> ATTPDU {
        ATTPDU.errorResponse(requestOpcode: opcode, handle: handle, error: error)
    }

    /// The Invalid Handle answer to a range with a zero start or a start past its end (§3.4.3.1,
    /// §3.4.4.1, §3.4.4.9), or nil when the range is valid.
    func invalidRange(_ opcode: ATTOpcode, _ start: UInt16, _ end: UInt16) -> ATTPDU? {
        guard start == 0 || start > end else { return nil }
        return errorResponse(opcode, start, .invalidHandle)
    }
}
