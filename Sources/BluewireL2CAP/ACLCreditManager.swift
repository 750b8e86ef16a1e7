import BluewireCore
import BluewireHCI

/// Host-side ACL flow control (Core Vol 4 Part E §4.1.1), sans-I/O.
///
/// The controller has `totalBuffers` LE ACL data buffers (LE Read Buffer Size). The host may only
/// send a packet while one is free; Number Of Completed Packets events return buffers per
/// connection handle. When a connection ends the controller frees that handle's buffers without
/// reporting them (§4.3), so `disconnected(handle:)` takes them back. Connections share the buffers
/// round-robin, one packet per connection per turn, so one busy link cannot starve the others;
/// packets of one connection stay in order.
public struct ACLCreditManager: Sendable {
    /// Buffers the controller reported.
    public private(set) var totalBuffers: Int
    /// Packets sent and not yet reported completed, per handle.
    public private(set) var inFlight: [UInt16: Int] = [:]

    var inFlightTotal = 0
    var queues: [UInt16: FragmentQueue] = [:]
    /// Handles in the order they get turns; the next turn starts at `cursor`.
    var order: [UInt16] = []
    var cursor = 0

    public init(totalBuffers: Int) {
        self.totalBuffers = Swift.max(0, totalBuffers)
    }

    /// Buffers free in the controller now.
    public var availableCredits: Int { Swift.max(0, totalBuffers - inFlightTotal) }

    /// Packets waiting on `handle`.
    public func queuedCount(handle: UInt16) -> Int { queues[handle]?.count ?? 0 }

    /// Packets in the controller for `handle`.
    public func inFlightCount(handle: UInt16) -> Int { inFlight[handle] ?? 0 }

    /// Sets the buffer count again (after a controller reset and a new LE Read Buffer Size).
    /// Forgets everything in flight and queued.
    public mutating func reset(totalBuffers: Int) {
        self = ACLCreditManager(totalBuffers: totalBuffers)
    }

    /// Queues the packets of one or more PDUs for `handle`, after any already queued.
    public mutating func enqueue(handle: UInt16, _ packets: [ACLPacket]) {
        guard !packets.isEmpty else { return }
        if queues[handle] == nil {
            queues[handle] = FragmentQueue()
            order.append(handle)
        }
        queues[handle]?.append(contentsOf: packets)
    }

    /// Takes as many queued packets as there are free buffers, fairly across connections, and
    /// counts them as in flight. Send them to the controller in the returned order.
    public mutating func nextPacketsToSend() -> [ACLPacket] {
        var credits = availableCredits
        var out: [ACLPacket] = []
        guard credits > 0, !order.isEmpty else { return out }
        var idle = 0
        while credits > 0, idle < order.count {
            if cursor >= order.count { cursor = 0 }
            let handle = order[cursor]
            cursor += 1
            guard let packet = queues[handle]?.popFirst() else {
                idle += 1
                continue
            }
            idle = 0
            out.append(packet)
            inFlight[handle, default: 0] += 1
            inFlightTotal += 1
            credits -= 1
        }
        return out
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
        let dropped = queues.removeValue(forKey: handle)?.count ?? 0
        inFlightTotal -= inFlight.removeValue(forKey: handle) ?? 0
        if let index = order.firstIndex(of: handle) {
            order.remove(at: index)
            if cursor > index { cursor -= 1 }
        }
        return dropped
    }
}

/// A FIFO of ACL packets with O(1) amortised removal from the front.
struct FragmentQueue: Sendable {
    var storage: [ACLPacket] = []
    var head = 0

    var count: Int { storage.count - head }

    mutating func append(contentsOf packets: [ACLPacket]) {
        storage.append(contentsOf: packets)
    }

    mutating func popFirst() -> ACLPacket? {
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
