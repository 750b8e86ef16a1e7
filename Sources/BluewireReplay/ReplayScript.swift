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
///
/// The capture is read as the replay goes (`ReplayPacketCursor`): the script holds only its window,
/// from the oldest packet not yet released to the farthest one read (the farthest a host packet was
/// matched), so memory does not grow with the capture. A host can run ahead of the capture only as
/// far as its own flow control lets it (one command at a time, ACL within the controller's buffers),
/// so the window stays small; a host packet whose kind the capture holds only more than
/// `lookahead` records ahead is a mismatch (`.beyondLookahead`) instead of a window that grows to
/// the end of the file.
///
/// Copies of a script read from a file share its reading position: give each replay its own.
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

    struct Entry: Sendable {
        var packet: ReplayPacket
        var sent = false
    }

    /// Positions of read, unmatched host packets of one kind, oldest first.
    struct PositionQueue: Sendable {
        var positions: [Int] = []
        var head = 0
        var isEmpty: Bool { head == positions.count }
        mutating func append(_ position: Int) { positions.append(position) }
        mutating func removeFirst() -> Int {
            let position = positions[head]
            head += 1
            if head == positions.count {
                positions.removeAll(keepingCapacity: true)
                head = 0
            }
            return position
        }
    }

    /// Records past which a host packet's kind is not looked for (see the type's discussion).
    public static let defaultLookahead = 65_536

    var cursor: ReplayPacketCursor
    /// A second reading position, ahead of `cursor`: finds the next host packet's capture time without
    /// holding the controller packets before it.
    var scout: ReplayPacketCursor?
    var scoutPosition = 0
    var scouted: (position: Int, packet: ReplayPacket)?
    /// The window: positions (in the capture's HCI packets) `base ..< base + window.count`, the live
    /// ones from `base + head`.
    var window: [Entry] = []
    var base = 0
    var head = 0
    var sourceEnded = false
    var queues: [Kind: PositionQueue] = [:]
    /// Position of the first host packet not sent yet (`readCount` when it lies beyond the window).
    var firstUnsent = 0
    /// Position of the next controller packet to release.
    var nextRelease = 0
    public let lookahead: Int
    public private(set) var failure: ReplayMismatch?
    /// Host packets matched so far.
    public private(set) var sentCount = 0
    /// Controller packets released so far.
    public private(set) var releasedCount = 0
    /// The capture time of its first packet (time zero of a replay).
    public private(set) var firstTimestamp: Int64?
    /// The host packet matched last.
    public private(set) var lastMatched: ReplayPacket?

    /// A script of the HCI packets among `records` (notes and other non-HCI records are skipped).
    public init(records: some Sequence<CaptureRecord>) {
        self.init(packets: ReplayPacket.all(records: records))
    }

    /// A script of `packets`, in order.
    public init(packets: [ReplayPacket], lookahead: Int = ReplayScript.defaultLookahead) {
        self.init(cursor: .memory(packets, next: 0), lookahead: lookahead)
    }

    /// A script from a whole capture file's bytes; a capture that ends inside a record is an error.
    public init(captureBytes: [UInt8]) throws(CaptureError) {
        self.init(packets: try ReplayPacket.all(captureBytes: captureBytes))
    }

    /// A script that reads the capture file at `path` as the replay goes. The file is read through once
    /// first (one record at a time): a capture that ends inside a record fails here.
    public init(capturePath: String, lookahead: Int = ReplayScript.defaultLookahead) throws(CaptureFileError) {
        try ReplayCaptureFile.check(path: capturePath)
        self.init(cursor: .file(try ReplayCaptureFile(path: capturePath)), lookahead: lookahead)
    }

    init(cursor: ReplayPacketCursor, lookahead: Int) {
        self.cursor = cursor
        self.lookahead = max(lookahead, 1)
        firstTimestamp = entry(at: 0)?.packet.timestamp
    }

    /// Position of the next packet `cursor` reads.
    var readCount: Int { base + window.count }

    /// Packets the script holds now (its memory is proportional to this).
    public var windowCount: Int { window.count - head }

    // MARK: Reading

    /// Reads one packet into the window; false at the end of the capture.
    mutating func readOne() -> Bool {
        guard !sourceEnded, let packet = cursor.next() else {
            sourceEnded = true
            return false
        }
        let position = readCount
        window.append(Entry(packet: packet))
        if packet.direction == .hostToController { queues[Kind(packet.packet), default: PositionQueue()].append(position) }
        return true
    }

    /// The packet at `position`, reading up to it; nil past the end (or before the window).
    mutating func entry(at position: Int) -> Entry? {
        while position >= readCount { guard readOne() else { return nil } }
        guard position >= base + head else { return nil }
        return window[position - base]
    }

    /// Moves `firstUnsent` over released-or-sent packets already in the window (never reads).
    mutating func advanceFirstUnsent() {
        while firstUnsent < readCount {
            let entry = window[firstUnsent - base]
            guard entry.packet.direction == .controllerToHost || entry.sent else { return }
            firstUnsent += 1
        }
    }

    /// Drops the window's packets before `nextRelease`: every one is released or sent.
    mutating func dropReleased() {
        head = nextRelease - base
        if head >= 1024 && head * 2 >= window.count {
            window.removeFirst(head)
            base += head
            head = 0
        }
    }

    // MARK: Releasing controller packets

    /// The next controller packet no host packet holds back, without taking it (nil if none is, now).
    public mutating func peekReleased() -> ReplayPacket? {
        while true {
            advanceFirstUnsent()
            if nextRelease < firstUnsent {
                let entry = window[nextRelease - base]
                if entry.packet.direction == .controllerToHost { return entry.packet }
                nextRelease += 1
                dropReleased()
            } else if firstUnsent == readCount {
                // The first unsent host packet, if any, lies beyond the window: read on.
                guard readOne() else { return nil }
            } else {
                return nil
            }
        }
    }

    /// Takes the next controller packet no host packet holds back (nil if none is, now).
    public mutating func takeReleased() -> ReplayPacket? {
        guard let packet = peekReleased() else { return nil }
        nextRelease += 1
        releasedCount += 1
        dropReleased()
        return packet
    }

    /// Releases every controller packet no host packet holds back: call at start and after each send.
    /// (A replay that must stay small takes them one at a time with `takeReleased()`.)
    public mutating func release() -> [ReplayPacket] {
        var out: [ReplayPacket] = []
        while let packet = takeReleased() { out.append(packet) }
        return out
    }

    // MARK: Matching host packets

    /// Holds a packet the host sent against the capture; on success, returns the controller packets
    /// it releases.
    public mutating func hostSent(_ packet: HCIPacket) -> Result<[ReplayPacket], ReplayMismatch> {
        if let mismatch = match(packet) { return .failure(mismatch) }
        return .success(release())
    }

    /// Holds a packet the host sent against the capture: nil if it matches (the controller packets it
    /// releases are then `takeReleased()`'s), else the mismatch (and every later call returns it).
    public mutating func match(_ packet: HCIPacket) -> ReplayMismatch? {
        if let failure { return failure }
        let kind = Kind(packet)
        while queues[kind]?.isEmpty ?? true {
            if readCount - (base + head) >= lookahead {
                let next = nextHostPacket
                return fail(ReplayMismatch(
                    reason: .beyondLookahead(records: lookahead), recordIndex: next?.recordIndex, expected: next?.packet,
                    actual: packet))
            }
            guard readOne() else {
                let next = nextHostPacket
                return fail(ReplayMismatch(
                    reason: .unexpectedPacket, recordIndex: next?.recordIndex, expected: next?.packet, actual: packet))
            }
        }
        let position = queues[kind]!.positions[queues[kind]!.head]
        let expected = window[position - base].packet
        guard expected.packet.type == packet.type, expected.packet.payload.elementsEqual(packet.payload) else {
            return fail(ReplayMismatch(
                reason: .differentBytes, recordIndex: expected.recordIndex, expected: expected.packet, actual: packet))
        }
        _ = queues[kind]!.removeFirst()
        window[position - base].sent = true
        sentCount += 1
        lastMatched = expected
        advanceFirstUnsent()
        return nil
    }

    mutating func fail(_ mismatch: ReplayMismatch) -> ReplayMismatch {
        failure = mismatch
        return mismatch
    }

    // MARK: What is left

    /// The first host packet of the capture not sent yet: what the replay waits for. Looks ahead
    /// without holding the packets it passes.
    public var nextHostPacket: ReplayPacket? {
        mutating get {
            advanceFirstUnsent()
            if firstUnsent < readCount { return window[firstUnsent - base].packet }
            // Every packet the host sent is in the window: the first unsent one is the first host
            // packet at or after `readCount`.
            if let scouted, scouted.position >= readCount { return scouted.packet }
            if sourceEnded { return nil }
            if scout == nil { scout = cursor.restarted() }
            while var reading = scout {
                guard let packet = reading.next() else {
                    scout = reading
                    return nil
                }
                let position = scoutPosition
                scoutPosition += 1
                scout = reading
                if position >= readCount && packet.direction == .hostToController {
                    scouted = (position, packet)
                    return packet
                }
            }
            return nil
        }
    }

    /// Whether every host packet was sent and every controller packet released.
    public var isExhausted: Bool {
        mutating get {
            advanceFirstUnsent()
            guard firstUnsent == readCount, nextRelease == readCount else { return false }
            return !readOne()
        }
    }

    /// Host packets of the capture not sent (yet), in capture order. Reads the rest of the capture
    /// with a second cursor and holds the host packets in it: for tests and small captures.
    public var unsentPackets: [ReplayPacket] {
        mutating get {
            var out: [ReplayPacket] = []
            for position in max(firstUnsent, base + head)..<readCount {
                let entry = window[position - base]
                if entry.packet.direction == .hostToController && !entry.sent { out.append(entry.packet) }
            }
            forEachUnread { if $0.direction == .hostToController { out.append($0) } }
            return out
        }
    }

    /// The strict end-of-replay check: a mismatch naming the first host packet never sent, if any.
    /// Counts the rest of the capture with a second cursor, holding none of it.
    public mutating func unsentMismatch() -> ReplayMismatch? {
        var count = 0
        var first: ReplayPacket?
        for position in max(firstUnsent, base + head)..<readCount {
            let entry = window[position - base]
            guard entry.packet.direction == .hostToController && !entry.sent else { continue }
            count += 1
            if first == nil { first = entry.packet }
        }
        forEachUnread { packet in
            guard packet.direction == .hostToController else { return }
            count += 1
            if first == nil { first = packet }
        }
        guard let first else { return nil }
        return ReplayMismatch(reason: .unsentPackets(count: count), recordIndex: first.recordIndex, expected: first.packet, actual: nil)
    }

    /// Calls `body` with every packet not read into the window yet, from a second cursor.
    func forEachUnread(_ body: (ReplayPacket) -> Void) {
        guard !sourceEnded, var reading = cursor.restarted() else { return }
        var position = 0
        while let packet = reading.next() {
            if position >= readCount { body(packet) }
            position += 1
        }
    }
}
