import BluewireCore
import BluewireHCI

/// Host-side ACL flow control (Core Vol 4 Part E §4.1.1), sans-I/O.
///
/// The controller has `totalBuffers` LE ACL data buffers (LE Read Buffer Size). The host may only
/// send a packet while one is free; Number Of Completed Packets events return buffers per
/// connection handle. When a connection ends the controller frees that handle's buffers without
/// reporting them (§4.3), so `disconnected(handle:)` takes them back. Connections share the buffers
/// round-robin, one packet per connection per turn, so one busy link cannot starve the others.
///
/// Within a connection, two lanes share its turns PDU by PDU: the fixed channels (ATT, signaling, SMP)
/// and the credit based channels. A channel moving bulk data then delays an ATT request by one K-frame
/// at most, instead of by everything its credits let it queue. The fragments of one PDU go out back to
/// back (a continuation belongs to the PDU started last on the link, Vol 3 Part A §7.2.1), and each
/// lane keeps its PDUs in order.
public struct ACLCreditManager: Sendable {
    /// Which of a connection's two queues a PDU waits in.
    public enum Lane: Sendable, Hashable {
        /// Fixed channels: ATT (CID 0x0004), LE signaling (0x0005), SMP (0x0006).
        case fixed
        /// Credit based channels (dynamic CIDs).
        case channels
    }

    /// Buffers the controller reported.
    public private(set) var totalBuffers: Int
    /// Packets sent and not yet reported completed, per handle.
    public private(set) var inFlight: LinearMap<UInt16, Int> = LinearMap()

    var inFlightTotal = 0
    /// Handles in the order they get turns; the next turn starts at `cursor`.
    var order: [UInt16] = []
    /// The packets waiting on `order[i]`. An array beside `order`, not a dictionary: connections are
    /// few, and an array element is mutated in place, where a dictionary value's modify accessor
    /// costs an allocation on every packet queued or sent.
    var queues: [LinkQueues] = []
    var cursor = 0

    public init(totalBuffers: Int) {
        self.totalBuffers = Swift.max(0, totalBuffers)
    }

    /// Buffers free in the controller now.
    public var availableCredits: Int { Swift.max(0, totalBuffers - inFlightTotal) }

    /// Packets waiting on `handle`.
    public func queuedCount(handle: UInt16) -> Int { slot(of: handle).map { queues[$0].count } ?? 0 }

    /// Packets waiting on `handle` in one lane.
    public func queuedCount(handle: UInt16, lane: Lane) -> Int {
        guard let index = slot(of: handle) else { return 0 }
        return lane == .fixed ? queues[index].fixed.count : queues[index].channels.count
    }

    /// Where `handle` is in `order` and `queues`.
    func slot(of handle: UInt16) -> Int? { order.firstIndex(of: handle) }

    /// Packets in the controller for `handle`.
    public func inFlightCount(handle: UInt16) -> Int { inFlight[handle] ?? 0 }

    /// Sets the buffer count again (after a controller reset and a new LE Read Buffer Size).
    /// Forgets everything in flight and queued.
    public mutating func reset(totalBuffers: Int) {
        self = ACLCreditManager(totalBuffers: totalBuffers)
    }

    /// Queues the packets of one or more PDUs for `handle`, after any already queued in `lane`
    /// (encoded now: the queue holds packets in their wire form).
    public mutating func enqueue(handle: UInt16, _ packets: [ACLPacket], lane: Lane = .fixed) {
        guard !packets.isEmpty else { return }
        let index = slotCreatingIfNeeded(handle)
        for packet in packets { queues[index].append(ACLWirePacket(packet), lane: lane) }
    }

    /// Queues one packet, in wire form, for `handle` after any already queued in `lane`: the host's
    /// send path, which builds each packet's bytes once (`L2CAPFragmenter.forEachWirePacket`) and
    /// queues them with no array around them.
    public mutating func enqueue(handle: UInt16, _ packet: ACLWirePacket, lane: Lane = .fixed) {
        queues[slotCreatingIfNeeded(handle)].append(packet, lane: lane)
    }

    /// Where `handle` is in `order` and `queues`, added at the end when it was not there.
    mutating func slotCreatingIfNeeded(_ handle: UInt16) -> Int {
        if let existing = slot(of: handle) { return existing }
        order.append(handle)
        queues.append(LinkQueues())
        return order.count - 1
    }

    /// Takes as many queued packets as there are free buffers, fairly across connections, and
    /// counts them as in flight. Send them to the controller in the returned order.
    public mutating func nextPacketsToSend() -> [ACLWirePacket] {
        var out: [ACLWirePacket] = []
        while let packet = nextPacketToSend() { out.append(packet) }
        return out
    }

    /// Takes the next packet to send if a buffer is free, in the order ``nextPacketsToSend()``
    /// would return it, and counts it as in flight; nil when no buffer is free or nothing waits.
    /// The host's send path loops on this, so sending allocates no array; the packet's bytes go to
    /// the transport as they are.
    public mutating func nextPacketToSend() -> ACLWirePacket? {
        guard availableCredits > 0 else { return nil }
        var idle = 0
        while idle < order.count {
            if cursor >= order.count { cursor = 0 }
            let index = cursor
            cursor += 1
            guard let packet = queues[index].popFirst() else {
                idle += 1
                continue
            }
            inFlight[order[index], default: 0] += 1
            inFlightTotal += 1
            return packet
        }
        return nil
    }

    /// Returns buffers from a Number Of Completed Packets event entry. Counts for handles with
    /// nothing in flight (e.g. reported after disconnection) and counts larger than what is in
    /// flight are clamped, so a misbehaving controller cannot create credits. Returns the number
    /// of buffers actually returned.
    @discardableResult
    public mutating func completed(handle: UInt16, count: Int) -> Int {
        let current = inFlight[handle] ?? 0
        let returned = Swift.min(current, Swift.max(0, count))
        inFlight[handle] = current - returned == 0 ? nil : current - returned
        inFlightTotal -= returned
        return returned
    }

    /// Drops the queue of a disconnected handle and reclaims its in-flight buffers (the controller
    /// flushes them, Vol 4 Part E §4.3). Returns how many queued packets were dropped.
    @discardableResult
    public mutating func disconnected(handle: UInt16) -> Int {
        inFlightTotal -= inFlight.removeValue(forKey: handle) ?? 0
        guard let index = slot(of: handle) else { return 0 }
        let dropped = queues.remove(at: index).count
        order.remove(at: index)
        if cursor > index { cursor -= 1 }
        return dropped
    }
}

/// One connection's two lanes and whose turn it is.
struct LinkQueues: Sendable {
    var fixed = FragmentQueue()
    var channels = FragmentQueue()
    /// The lane in the middle of a PDU (its next packet is a continuation): it goes on until the PDU is out.
    var midPDU: ACLCreditManager.Lane?
    /// The lane that sent the last whole PDU; the other one goes next when both wait.
    var lastServed: ACLCreditManager.Lane = .channels

    var count: Int { fixed.count + channels.count }

    mutating func append(_ packet: ACLWirePacket, lane: ACLCreditManager.Lane) {
        if lane == .fixed {
            fixed.append(packet)
        } else {
            channels.append(packet)
        }
    }

    /// The next packet of this connection: the PDU under way first, else the lanes in turn.
    mutating func popFirst() -> ACLWirePacket? {
        let lane: ACLCreditManager.Lane
        if let midPDU {
            lane = midPDU
        } else if fixed.count == 0 {
            lane = .channels
        } else if channels.count == 0 {
            lane = .fixed
        } else {
            lane = lastServed == .fixed ? .channels : .fixed
        }
        let packet: ACLWirePacket?
        let nextIsContinuation: Bool
        if lane == .fixed {
            packet = fixed.popFirst()
            nextIsContinuation = fixed.first.map { !$0.packetBoundary.isStart } ?? false
        } else {
            packet = channels.popFirst()
            nextIsContinuation = channels.first.map { !$0.packetBoundary.isStart } ?? false
        }
        guard packet.isSome else {
            midPDU = nil
            return nil
        }
        midPDU = nextIsContinuation ? lane : nil
        if !nextIsContinuation { lastServed = lane }
        return packet
    }
}

/// A FIFO of ACL packets with O(1) amortised removal from the front.
struct FragmentQueue: Sendable {
    var storage: [ACLWirePacket] = []
    var head = 0

    var count: Int { storage.count - head }

    var first: ACLWirePacket? { head < storage.count ? storage[head] : nil }

    mutating func append(_ packet: ACLWirePacket) {
        storage.append(packet)
    }

    mutating func popFirst() -> ACLWirePacket? {
        guard head < storage.count else { return nil }
        let packet = storage[head]
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return packet
    }
}
