import BluewireCore
import BluewireSnoop
import BluewireTransport

/// One HCI packet of a capture and its place in it.
public struct ReplayPacket: Sendable, Hashable {
    /// Index of the capture record, from 0 (notes and other non-HCI records keep their numbers).
    public var recordIndex: Int
    public var direction: PacketDirection
    public var packet: HCIPacket
    /// The record's timestamp, microseconds, as the file has it.
    public var timestamp: Int64

    public init(recordIndex: Int, direction: PacketDirection, packet: HCIPacket, timestamp: Int64) {
        self.recordIndex = recordIndex
        self.direction = direction
        self.packet = packet
        self.timestamp = timestamp
    }
}

/// The rules of replaying a capture as the controller, without I/O: which host packets the capture
/// accepts, and which controller packets each one releases.
///
/// - Controller-to-host packets are released in capture order, each once every host-to-controller
///   packet before it in the capture has been sent: the host drives the pace.
/// - A host packet is held against the next unsent capture packet of its kind: HCI commands in order
///   per opcode, ACL (and SCO, ISO) in order per connection handle. Different kinds may interleave
///   differently from the capture (a host may queue an ACL packet before or after an unrelated command).
/// - A packet that differs, or that the capture has no more of, is a `ReplayMismatch`; after one, the
///   script accepts nothing more.
public struct ReplayScript: Sendable {
    /// What a host packet is matched by: the order that must be kept.
    enum Kind: Hashable, Sendable {
        case command(opcode: UInt16)
        case data(HCIPacketType, handle: UInt16)
        /// Too short to carry an opcode or handle; matched in order with its like.
        case malformed(HCIPacketType)

        init(_ packet: HCIPacket) {
            let p = packet.payload
            guard p.count >= 2 else {
                self = .malformed(packet.type)
                return
            }
            let value = UInt16(p[p.startIndex]) | UInt16(p[p.startIndex + 1]) << 8
            switch packet.type {
            case .command: self = .command(opcode: value)
            case .event: self = .malformed(.event)
            case .acl, .sco, .iso: self = .data(packet.type, handle: value & 0x0FFF)
            }
        }
    }

    /// The capture's HCI packets, in order.
    public let packets: [ReplayPacket]
    /// Positions (in `packets`) of the host packets of each kind, and how many of each were sent.
    var queues: [Kind: [Int]] = [:]
    var sentPerKind: [Kind: Int] = [:]
    var sent: [Bool]
    /// Position of the first host packet not sent yet (`packets.count` when all were).
    var firstUnsent = 0
    /// Position of the next controller packet to release.
    var nextRelease = 0
    public private(set) var failure: ReplayMismatch?
    /// Host packets matched so far.
    public private(set) var sentCount = 0
    /// Controller packets released so far.
    public private(set) var releasedCount = 0

    /// A script of the HCI packets among `records` (notes and other non-HCI records are skipped).
    public init(records: some Sequence<CaptureRecord>) {
        var packets: [ReplayPacket] = []
        for record in records {
            guard let packet = record.packet else { continue }
            packets.append(ReplayPacket(
                recordIndex: record.index, direction: record.direction, packet: packet, timestamp: record.timestamp))
        }
        self.init(packets: packets)
    }

    /// A script of `packets`, in order.
    public init(packets: [ReplayPacket]) {
        self.packets = packets
        sent = Array(repeating: false, count: packets.count)
        for (position, packet) in packets.enumerated() where packet.direction == .hostToController {
            queues[Kind(packet.packet), default: []].append(position)
        }
        advanceFirstUnsent()
    }

    /// A script from a whole capture file's bytes; a capture that ends inside a record is an error.
    public init(captureBytes: [UInt8]) throws(CaptureError) {
        let (records, error) = CaptureReader.readAll(captureBytes)
        if let error { throw error }
        self.init(records: records)
    }

    /// The host packet matched last.
    public private(set) var lastMatched: ReplayPacket?

    /// The first host packet of the capture not sent yet: what the replay waits for.
    public var nextHostPacket: ReplayPacket? { firstUnsent < packets.count ? packets[firstUnsent] : nil }

    /// Host-to-controller packets in the capture.
    public var hostPacketCount: Int { queues.values.reduce(0) { $0 + $1.count } }

    /// Whether every host packet was sent and every controller packet released.
    public var isExhausted: Bool { firstUnsent == packets.count && nextRelease == packets.count }

    /// Host packets of the capture not sent (yet), in capture order.
    public var unsentPackets: [ReplayPacket] {
        var out: [ReplayPacket] = []
        for (position, packet) in packets.enumerated() where packet.direction == .hostToController && !sent[position] {
            out.append(packet)
        }
        return out
    }

    /// Releases the controller packets no host packet holds back: call at start and after each send.
    public mutating func release() -> [ReplayPacket] {
        var out: [ReplayPacket] = []
        while nextRelease < packets.count && nextRelease < firstUnsent {
            if packets[nextRelease].direction == .controllerToHost {
                out.append(packets[nextRelease])
                releasedCount += 1
            }
            nextRelease += 1
        }
        return out
    }

    /// Holds a packet the host sent against the capture; on success, returns the controller packets
    /// it releases.
    public mutating func hostSent(_ packet: HCIPacket) -> Result<[ReplayPacket], ReplayMismatch> {
        if let failure { return .failure(failure) }
        let kind = Kind(packet)
        let done = sentPerKind[kind] ?? 0
        guard let queue = queues[kind], done < queue.count else {
            let next = firstUnsent < packets.count ? packets[firstUnsent] : nil
            return fail(ReplayMismatch(
                reason: .unexpectedPacket, recordIndex: next?.recordIndex, expected: next?.packet, actual: packet))
        }
        let position = queue[done]
        let expected = packets[position]
        guard expected.packet.type == packet.type, expected.packet.payload.elementsEqual(packet.payload) else {
            return fail(ReplayMismatch(
                reason: .differentBytes, recordIndex: expected.recordIndex, expected: expected.packet, actual: packet))
        }
        sentPerKind[kind] = done + 1
        sent[position] = true
        sentCount += 1
        lastMatched = expected
        advanceFirstUnsent()
        return .success(release())
    }

    /// The strict end-of-replay check: a mismatch naming the first host packet never sent, if any.
    public func unsentMismatch() -> ReplayMismatch? {
        let unsent = unsentPackets
        guard let first = unsent.first else { return nil }
        return ReplayMismatch(reason: .unsentPackets(count: unsent.count), recordIndex: first.recordIndex,
                              expected: first.packet, actual: nil)
    }

    mutating func fail(_ mismatch: ReplayMismatch) -> Result<[ReplayPacket], ReplayMismatch> {
        failure = mismatch
        return .failure(mismatch)
    }

    mutating func advanceFirstUnsent() {
        while firstUnsent < packets.count && (packets[firstUnsent].direction == .controllerToHost || sent[firstUnsent]) {
            firstUnsent += 1
        }
    }
}
