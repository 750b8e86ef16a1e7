import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI

/// One LE connection of a `Host`, in either role. A value handle: copies refer to the same link,
/// and every method runs on the Host's executor. Once the link is gone, operations fail with
/// `ConnectionError.disconnected`, also after a later link got the same handle (the controller may
/// give a freed handle to the next link, Core Vol 4 Part E §7.7.65.1): every method checks that the
/// handle is still the link it was made for, so a `Connection` kept too long never acts on another
/// device's link, nor on a later link of the same peer that got the same handle: the host numbers its
/// links as they come up (`generation`), and a `Connection` keeps its link's number.
public struct Connection: Sendable, Hashable, CustomStringConvertible {
    public let host: BluetoothHost
    /// The HCI connection handle.
    public let handle: UInt16
    /// The peer's address.
    public let peer: BluetoothAddress
    /// The local device's role.
    public let role: LinkRole
    /// The number the host gave this link as it came up (0: a link the host no longer knows, which
    /// no live link has). Two links of one peer that got the same handle in turn differ here.
    let generation: UInt64

    public static func == (lhs: Connection, rhs: Connection) -> Bool {
        lhs.host === rhs.host && lhs.handle == rhs.handle && lhs.peer == rhs.peer && lhs.generation == rhs.generation
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(host))
        hasher.combine(handle)
    }

    public var description: String { "connection 0x\(hex(handle, width: 4)) to \(peer) (\(role))" }

    /// Sends an ATT request and waits for its response (or Error Response, returned as a PDU). ATT
    /// allows one outstanding request per bearer (Core Vol 3 Part F §3.3.2): later requests wait.
    /// Cancelling the calling task throws `.cancelled` at once; the bearer still waits for the late
    /// response before it sends the next request.
    public nonisolated(nonsending) func request(_ pdu: ATTPDU) async throws(ConnectionError) -> ATTPDU {
        try await host.attRequest(pdu, on: handle, link: identity)
    }

    /// Sends an ATT command (Write Command): no response, not held back by an outstanding request.
    public nonisolated(nonsending) func send(command pdu: ATTPDU) async throws(ConnectionError) {
        try await host.attCommand(pdu, on: handle, link: identity)
    }

    /// Exchanges ATT MTUs (client side, once per connection) and returns the ATT_MTU now in force.
    @discardableResult
    public func exchangeMTU() async throws(ConnectionError) -> Int {
        try await host.exchangeMTU(on: handle, link: identity)
    }

    /// The ATT_MTU in force (23 until an exchange).
    public var mtu: Int {
        get async { await host.mtu(on: handle, link: identity) }
    }

    /// Notifications and indications from the peer's server for `valueHandle` (or every handle when
    /// nil), from this call on, until the link ends. Register before enabling the CCCD so nothing sent
    /// in between is lost: the sequence buffers until it is iterated.
    public func notifications(valueHandle: UInt16? = nil) async -> AsyncStream<GATTNotification> {
        await host.subscribe(on: handle, valueHandle: valueHandle, link: identity)
    }

    /// Disconnects and waits for Disconnection Complete.
    public func disconnect(reason: HCIStatus = .remoteUserTerminatedConnection) async throws(HostError) {
        try await host.disconnect(handle: handle, reason: reason, link: identity)
    }

    /// Waits until the link ends and returns the reason (at once if it already has).
    public func disconnection() async -> HCIStatus {
        await host.waitForDisconnection(handle: handle, link: identity)
    }

    /// Whether the link is still up.
    public var isConnected: Bool {
        get async { await host.isLink(handle, identity) }
    }

    /// The connection state machine's current state (Connected.Idle etc.); once the link is gone, the
    /// state it was left in (Disconnected.Initial, or Error after a failure). For a connection made with
    /// `connect(to:)` this is the peer's machine (`BluetoothHost.state(of:)`) while the link is up.
    public var state: ConnectionState {
        get async { await host.connectionState(handle: handle, link: identity) }
    }

    /// Which link this is: its peer and its number.
    var identity: LinkIdentity { LinkIdentity(peer: peer, generation: generation) }
}

/// One link of a host: its peer and the number the host gave it as it came up. A handle alone does
/// not name a link for longer than the link lasts (Core Vol 4 Part E §7.7.65.1).
struct LinkIdentity: Hashable, Sendable {
    var peer: BluetoothAddress
    var generation: UInt64
}

// Each takes the link the caller's `Connection` names (nil: whatever link has the handle) and treats a
// handle that now belongs to another link (another peer's, or a later one of the same peer) as a link
// that ended (`isLink`, StaleConnectionError.swift). The check
// and the engine request run in one turn of the host's executor, so no link can come up in between.
extension BluetoothHost {
    func attRequest(_ pdu: ATTPDU, on handle: UInt16, link: LinkIdentity? = nil) async throws(ConnectionError) -> ATTPDU {
        guard isLink(handle, link) else { throw .disconnected(endedReason(handle)) }
        return try await engineATTRequest(engineHost, pdu, on: handle)
    }

    func attCommand(_ pdu: ATTPDU, on handle: UInt16, link: LinkIdentity? = nil) async throws(ConnectionError) {
        guard isLink(handle, link) else { throw .disconnected(endedReason(handle)) }
        try await engineATTCommand(engineHost, pdu, on: handle)
    }

    func exchangeMTU(on handle: UInt16, link: LinkIdentity? = nil) async throws(ConnectionError) -> Int {
        guard isLink(handle, link) else { throw .disconnected(endedReason(handle)) }
        return try await engineExchangeMTU(engineHost, on: handle)
    }

    func mtu(on handle: UInt16, link: LinkIdentity? = nil) -> Int {
        guard isLink(handle, link) else { return ATTBearer.defaultMTU }
        return engineMTU(engineHost, on: handle)
    }

    func subscribe(on handle: UInt16, valueHandle: UInt16?, link: LinkIdentity? = nil) -> AsyncStream<GATTNotification> {
        guard isLink(handle, link) else {
            let (stream, continuation) = AsyncStream<GATTNotification>.makeStream()
            continuation.finish()
            return stream
        }
        return engineSubscribe(on: handle, valueHandle: valueHandle)
    }

    /// `Connection.disconnect`: nothing to do once the handle is another link (its own link
    /// is gone), checked in the same turn as the engine's request.
    func disconnect(handle: UInt16, reason: HCIStatus, link: LinkIdentity) async throws(HostError) {
        guard isLink(handle, link) else { return }
        try await engineDisconnect(engineHost, handle: handle, reason: reason)
    }

    func waitForDisconnection(handle: UInt16, link: LinkIdentity? = nil) async -> HCIStatus {
        guard isLink(handle, link) else { return endedReason(handle) }
        return await engineWaitForDisconnection(handle: handle)
    }

    /// Why the link of `handle` ended, or Unknown Connection Identifier if there never was one.
    func endedReason(_ handle: UInt16) -> HCIStatus {
        endedLinks[handle] ?? .unknownConnectionIdentifier
    }


    func connectionState(handle: UInt16, link: LinkIdentity? = nil) -> ConnectionState {
        guard isLink(handle, link) || shell.links[handle] == nil else { return .initial }
        return engineConnectionState(engineHost, handle: handle)
    }
}
