import BluewireCore

/// An ACL packet from a host waiting to go over the air.
struct OutgoingACLPacket {
    var data: ArraySlice<UInt8>
    /// Whether it starts an L2CAP PDU (its first link-layer PDU gets LLID "start").
    var isStart: Bool
    /// Octets already sent in earlier link-layer PDUs.
    var sentOctets = 0
}

/// One link-layer data PDU in flight.
struct LinkLayerPDU {
    var payload: ArraySlice<UInt8>
    var isStart: Bool
    /// Whether sending it finishes a host packet (which then counts as completed).
    var completesHostPacket: Bool
}

/// A link-layer control procedure. With radio timing it rides in the next connection event; without, it
/// completes as soon as the command that starts it has been answered.
enum ControlProcedure {
    case connectionUpdate(initiator: Int, interval: UInt16, latency: UInt16, timeout: UInt16)
    case dataLengthUpdate
    case phyUpdate(initiator: Int, allPHYs: UInt8, txPHYs: UInt8, rxPHYs: UInt8)
    case remoteVersion(requester: Int)
    case remoteFeatures(requester: Int)
    case terminate(initiator: Int, reason: UInt8)
    /// The central's LE Enable Encryption reaches the peripheral: its host gets LE Long Term Key Request.
    case encryptionStart
    /// The peripheral's host answered with this key (nil: a negative reply): both sides learn the outcome.
    case encryptionResponse(key: [UInt8]?)
}

/// One side of a connection.
struct ConnectionEnd {
    var controller: Int
    var handle: UInt16
    /// The address this side uses on the link.
    var address: BluetoothAddress
    /// connMaxTxOctets: what this side's host asked for (LE Set Data Length or the suggested default).
    var maxTxOctets: UInt16
    /// What this side can receive (its supported maximum, or 27 without data length extension).
    var maxRxOctets: UInt16
    /// connEffectiveMaxTxOctets, this side to the other (27 until a data length update).
    var effectiveTxOctets: UInt16 = 27
    /// The PHY this side transmits on.
    var txPHY: UInt8 = PHY.le1M
    var queue: [OutgoingACLPacket] = []
    /// Host packets accepted and not yet completed (their buffers are freed at disconnection).
    var unacknowledgedPackets = 0
    /// Completed packets not yet reported in Number Of Completed Packets (radio timing only).
    var completedSinceReport = 0
    /// L2CAP PDU being reassembled for `.wholeL2CAPPDUs` delivery.
    var reassembly: [UInt8] = []
    /// The controller was reset: this side no longer exists, only the peer will notice the loss.
    var isDetached = false
}

/// A connection between two controllers on the link. `ends[0]` is the central, `ends[1]` the peripheral.
final class LinkConnection {
    let id: Int
    var ends: [ConnectionEnd]
    /// Connection interval (1.25 ms units), peripheral latency (events), supervision timeout (10 ms units).
    var interval: UInt16
    var latency: UInt16
    var supervisionTimeout: UInt16
    var usesChannelSelectionAlgorithm2: Bool
    /// The connection-event grid: events happen at `anchor + k × interval`.
    var anchor: MonotonicInstant
    var procedures: [ControlProcedure] = []
    /// The key the central's host gave in LE Enable Encryption, until the peripheral's host answers.
    var requestedKey: [UInt8]?
    /// Rand and EDIV of that request, passed to the peripheral's host.
    var requestedKeyIdentity: (rand: [UInt8], ediv: UInt16)?
    /// The link is encrypted (a later LE Enable Encryption is a key refresh).
    var isEncrypted = false
    /// Bumped when the connection ends or its event schedule is replaced, to ignore stale timers.
    var generation: UInt64 = 0
    var isEventScheduled = false
    /// Start of the connection event in progress, and the exchanges done in it.
    var eventStart: MonotonicInstant?
    var lastEventStart: MonotonicInstant?
    var exchangesInEvent = 0
    /// The exchange in flight: a PDU (or control procedure) each way, delivered when it ends.
    var inFlight: (central: LinkLayerPDU?, peripheral: LinkLayerPDU?, procedure: ControlProcedure?)?
    /// The link was lost (fault or reset): nothing is delivered, the supervision timeout will end it.
    var isLost = false
    var isClosed = false

    init(
        id: Int, central: ConnectionEnd, peripheral: ConnectionEnd, interval: UInt16, latency: UInt16,
        supervisionTimeout: UInt16, usesChannelSelectionAlgorithm2: Bool, anchor: MonotonicInstant
    ) {
        self.id = id
        self.ends = [central, peripheral]
        self.interval = interval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
        self.usesChannelSelectionAlgorithm2 = usesChannelSelectionAlgorithm2
        self.anchor = anchor
    }

    var intervalSpan: TimeSpan { .microseconds(Int64(max(interval, 1)) * Units.connectionInterval) }
    var supervisionTimeoutSpan: TimeSpan { .microseconds(Int64(supervisionTimeout) * Units.tenMilliseconds) }

    /// Whether anything waits for a connection event.
    var hasWork: Bool {
        !procedures.isEmpty || ends.contains { !$0.queue.isEmpty }
    }

    /// The side that belongs to `controller`, if any.
    func side(of controller: Int) -> Int? {
        ends.firstIndex { $0.controller == controller && !$0.isDetached }
    }

    /// Takes the next link-layer PDU from one side's queue, at most its effective payload size long.
    func takePDU(from side: Int) -> LinkLayerPDU? {
        guard var packet = ends[side].queue.first else { return nil }
        let size = Int(ends[side].effectiveTxOctets)
        let start = packet.data.startIndex + packet.sentOctets
        let end = min(start + size, packet.data.endIndex)
        let pdu = LinkLayerPDU(
            payload: packet.data[start..<end], isStart: packet.isStart && packet.sentOctets == 0,
            completesHostPacket: end == packet.data.endIndex)
        packet.sentOctets += end - start
        if pdu.completesHostPacket {
            ends[side].queue.removeFirst()
        } else {
            ends[side].queue[0] = packet
        }
        return pdu
    }
}
