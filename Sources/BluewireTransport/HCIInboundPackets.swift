import BluewireCore

/// The packets a controller sends, in the order they arrived.
///
/// An asynchronous sequence with typed failure: it ends (returns nil) when the transport is closed
/// or the stream ended at a packet boundary, and throws, once, the `TransportError` that stopped the
/// transport otherwise (framing error, read failure); after that it returns nil.
///
/// Consume it from one long-lived task (the Host's receive loop). Cancelling a task that waits in
/// `next()` (a caller-side timeout) makes that call return nil but loses nothing: the sequence stays
/// open and a later `next()` gets the packets that arrived meanwhile. Several iterators share one
/// queue (each packet goes to exactly one of them), which is rarely what anyone wants.
public struct HCIInboundPackets: AsyncSequence, Sendable {
    typealias InboundPacketQueue = SingleConsumerQueue<HCIPacket, TransportError>

    public typealias Element = HCIPacket
    public typealias Failure = TransportError

    let queue: InboundPacketQueue
    let observers: [@Sendable (HCIPacket) -> Void]

    init(queue: InboundPacketQueue, observers: [@Sendable (HCIPacket) -> Void] = []) {
        self.queue = queue
        self.observers = observers
    }

    /// A sequence and the continuation that feeds it, for transports written outside this module
    /// (the replay transport). Yield packets in order; finish once.
    public static func makeStream() -> (packets: HCIInboundPackets, continuation: Continuation) {
        let queue = InboundPacketQueue()
        return (HCIInboundPackets(queue: queue), Continuation(queue: queue))
    }

    /// The same packets, with `observer` called on each as the consumer receives it, before the
    /// consumer sees it (how `CaptureTap` records inbound packets without a task of its own).
    public func observing(_ observer: @escaping @Sendable (HCIPacket) -> Void) -> HCIInboundPackets {
        HCIInboundPackets(queue: queue, observers: observers + [observer])
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(queue: queue, observers: observers)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        public typealias Element = HCIPacket
        public typealias Failure = TransportError

        let queue: InboundPacketQueue
        let observers: [@Sendable (HCIPacket) -> Void]

        /// Stays on the caller's executor (the host actor's): a buffered packet comes back with no hop.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(TransportError) -> HCIPacket? {
            guard let packet = try await queue.next(isolation: actor) else { return nil }
            for observer in observers { observer(packet) }
            return packet
        }

        /// A packet that has already arrived, without waiting (nil if none has): a consumer that
        /// took one with `next` takes the rest of a burst this way, with no suspension point per
        /// packet. The end of the sequence is reported by `next`.
        public mutating func nextBuffered() -> HCIPacket? {
            guard let packet = queue.nextBuffered() else { return nil }
            for observer in observers { observer(packet) }
            return packet
        }

        /// Every packet that has already arrived, in order, in `batch` (emptied first; reuse it
        /// and it allocates nothing in steady state): what a consumer feeds in one go after `next`,
        /// with one lock for the burst instead of one per packet. The end is reported by `next`.
        public mutating func takeBuffered(into batch: inout [HCIPacket]) {
            queue.takeBuffered(into: &batch)
            for packet in batch { for observer in observers { observer(packet) } }
        }

        public mutating func next() async throws(TransportError) -> HCIPacket? {
            guard let packet = try await queue.next(isolation: nil) else { return nil }
            for observer in observers { observer(packet) }
            return packet
        }
    }

    /// Feeds an `HCIInboundPackets` sequence.
    public struct Continuation: Sendable {
        let queue: InboundPacketQueue

        /// Delivers one packet (after all packets yielded before it).
        public func yield(_ packet: HCIPacket) {
            queue.yield(packet)
        }

        /// Delivers `packets` in order (after all packets yielded before them) under one lock and
        /// with one wake-up of the consumer: what a transport does with the packets of one read.
        /// (A concrete slice, not `some Collection`: the queue's generic code is specialized here,
        /// inside this module, and a caller's batch array passes as `batch[...]` without a copy.)
        public func yield(contentsOf packets: ArraySlice<HCIPacket>) {
            queue.yield(contentsOf: packets)
        }

        /// Ends the sequence: normally when `error` is nil, else the consumer's next call throws `error`
        /// (after the packets already yielded). Later calls to `yield` and `finish` are ignored.
        public func finish(throwing error: TransportError? = nil) {
            queue.finish(throwing: error)
        }
    }
}
