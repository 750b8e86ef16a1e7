import BluewireCore
import BluewireHCI
import BluewireSMP

/// Everything a capture shows about one connection: from its Connection Complete event (or its first
/// ACL packet, when the link predates the capture) to its Disconnection Complete (or the capture's end).
///
/// A connection handle is reused once its link is gone, so a new Connection Complete on a known handle
/// starts a new `AnalyzedConnection`; no state (reassembly, GATT tables) carries over.
public struct AnalyzedConnection: Sendable {
    /// Position among the capture's connections, from 0.
    public var index: Int
    /// Connection_Handle (12 bits).
    public var handle: UInt16
    public var transport: LinkTransport
    /// The peer's address; nil when the connection started before the capture.
    public var peerAddress: BluetoothAddress?
    /// The local device's role; nil when unknown (connection set up before the capture, or BR/EDR).
    public var localRole: LinkRole?
    /// Parameters at connection time, then every successful Connection Update Complete, in order.
    public var parameterHistory: [ConnectionParameters] = []
    public var dataLengthChanges: [DataLengthChange] = []
    public var phyUpdates: [PHYUpdate] = []
    /// Whether encryption was switched on (Encryption Change with Encryption_Enabled ≠ 0).
    public var encrypted = false
    /// Every pairing the capture shows on the link, in order (Security Manager, CID 0x0006).
    public var pairings: [ObservedPairing] = []
    /// Security Requests the peripheral sent (Core Vol 3 Part H §3.6.7).
    public var securityRequests = 0
    /// SMP PDUs that did not decode.
    public var smpDecodeErrors = 0
    /// The pairing whose key encrypted the link last; nil when the link is not encrypted or was
    /// encrypted with a key from an earlier connection (a bond).
    public var encryptingPairing: Int?

    /// Client Rx MTU of the last Exchange MTU Request and Server Rx MTU of the last response.
    public var clientRxMTU: UInt16?
    public var serverRxMTU: UInt16?

    /// Record that opened the connection (its Connection Complete, or its first packet).
    public var openedAtRecord: Int
    /// Record of the Disconnection Complete; nil when the capture ends with the link up.
    public var closedAtRecord: Int?
    /// Disconnection reason.
    public var disconnectReason: HCIStatus?

    /// Timestamps (capture units, microseconds) of the connection's first and last ACL packet.
    public var firstPacketTimestamp: Int64?
    public var lastPacketTimestamp: Int64?

    /// Host to controller: what the local device sent.
    public var sent = DirectionTraffic()
    /// Controller to host: what the peer sent.
    public var received = DirectionTraffic()

    /// ATT PDUs by opcode (the first octet, counted even when the rest does not decode).
    public var attOpcodeCounts: [UInt8: Int] = [:]
    /// ACL packets that did not decode, L2CAP fragments dropped by reassembly, ATT PDUs that did not decode.
    public var aclDecodeErrors = 0
    public var reassemblyErrors = 0
    public var attDecodeErrors = 0
    /// Credit based channels on this link (LE CoC, enhanced, EATT bearers), in the order they opened.
    public var channels: [CreditBasedChannelTracker.Channel] = []

    /// The peer's GATT server (the local device was the client).
    public var peerServer = ObservedGATTServer(side: .peer)
    /// The local GATT server (the peer was the client).
    public var localServer = ObservedGATTServer(side: .local)

    public init(index: Int, handle: UInt16, transport: LinkTransport, openedAtRecord: Int) {
        self.index = index
        self.handle = handle
        self.transport = transport
        self.openedAtRecord = openedAtRecord
    }

    /// Whether the capture holds the connection's setup (a Connection Complete event).
    public var startedInCapture: Bool { peerAddress != nil }

    /// The connection parameters in force at the end of the capture.
    public var parameters: ConnectionParameters? { parameterHistory.last }

    /// The ATT_MTU both sides use after an Exchange MTU (Core Vol 3 Part F §3.4.2.2: the minimum of
    /// the two Rx MTUs, never below the LE default of 23); 23 when no exchange was captured.
    public var attMTU: Int {
        guard let client = clientRxMTU, let server = serverRxMTU else { return 23 }
        return Swift.max(23, Int(Swift.min(client, server)))
    }

    /// `attMTU` on an LE link (or one whose radio the capture does not tell), nil on BR/EDR: there
    /// ATT_MTU is the L2CAP channel's MTU (Core Vol 3 Part G §5.3) and Exchange MTU is not used
    /// (§4.3.1), so neither the LE default of 23 nor an exchange applies.
    public var leATTMTU: Int? { transport == .brEdr ? nil : attMTU }

    /// Microseconds between the first and last ACL packet. Capture clocks can step backwards:
    /// a negative or overflowing span counts as zero rather than failing.
    public var durationMicroseconds: Int64 {
        guard let first = firstPacketTimestamp, let last = lastPacketTimestamp else { return 0 }
        let (span, overflow) = last.subtractingReportingOverflow(first)
        return overflow || span < 0 ? 0 : span
    }

    /// ATT throughput of what the local device sent, in bits per second (nil for a zero duration).
    public var sentATTBitsPerSecond: Int64? { sent.attBitsPerSecond(overMicroseconds: durationMicroseconds) }
    /// ATT throughput of what the peer sent, in bits per second (nil for a zero duration).
    public var receivedATTBitsPerSecond: Int64? { received.attBitsPerSecond(overMicroseconds: durationMicroseconds) }

    /// Total ATT PDUs in both directions.
    public var attPDUs: Int { sent.attPDUs + received.attPDUs }

    /// The security level the link ended at (Core Vol 3 Part C §10.2.1): 1 unencrypted, 2-4 from
    /// the pairing whose key encrypts it; nil when encrypted with a key the capture does not show
    /// being made (a bond from an earlier connection).
    public var securityLevel: Int? {
        guard encrypted else { return 1 }
        return encryptingPairing.flatMap { pairings[$0].securityLevel }
    }

    /// An SMP PDU on the connection; `fromLocal` when the capture's host sent it.
    mutating func analyzeSMP(_ payload: ArraySlice<UInt8>, fromLocal: Bool, record: Int) {
        let pdu: SMPPDU
        do {
            pdu = try SMPPDU(decoding: Array(payload))
        } catch {
            smpDecodeErrors += 1
            return
        }
        switch pdu {
        case .pairingRequest(let features):
            pairings.append(ObservedPairing(startedAtRecord: record, localIsInitiator: fromLocal, request: features))
        case .securityRequest:
            securityRequests += 1
        default:
            guard !pairings.isEmpty else { return }
            pairings[pairings.count - 1].note(pdu, fromLocal: fromLocal)
        }
    }

    /// An Encryption Change (or Key Refresh) that switched encryption on: the last pairing's key is
    /// in use if it got past its Pairing Response and did not fail; otherwise the key is a bond's.
    mutating func noteEncryption(enabled: Bool, record: Int) {
        encrypted = enabled
        guard enabled else {
            encryptingPairing = nil
            return
        }
        if let last = pairings.indices.last, pairings[last].response != nil, pairings[last].failure == nil {
            if pairings[last].encryptedAtRecord == nil { pairings[last].encryptedAtRecord = record }
            encryptingPairing = last
        } else {
            encryptingPairing = nil
        }
    }

    mutating func notePacket(at timestamp: Int64) {
        if firstPacketTimestamp == nil { firstPacketTimestamp = timestamp }
        lastPacketTimestamp = timestamp
    }
}
