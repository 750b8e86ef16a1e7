import BluewireCore

/// The packets a controller sends, in the order they arrived.
///
/// A single-consumer asynchronous sequence with typed failure: it ends (returns nil) when the
/// transport is closed or the stream ended at a packet boundary, and throws the `TransportError`
/// that stopped the transport otherwise (framing error, read failure). Iterate it from one task only.
public struct HCIInboundPackets: AsyncSequence, Sendable {
    public typealias Element = HCIPacket
    public typealias Failure = TransportError

    @usableFromInline let stream: AsyncStream<Result<HCIPacket, TransportError>>
    @usableFromInline let observers: [@Sendable (HCIPacket) -> Void]

    init(stream: AsyncStream<Result<HCIPacket, TransportError>>, observers: [@Sendable (HCIPacket) -> Void] = []) {
        self.stream = stream
        self.observers = observers
    }

    /// A sequence and the continuation that feeds it, for transports written outside this module
    /// (the replay transport). Yield packets in order; finish once.
    public static func makeStream() -> (packets: HCIInboundPackets, continuation: Continuation) {
        let (stream, continuation) = AsyncStream<Result<HCIPacket, TransportError>>.makeStream(bufferingPolicy: .unbounded)
        return (HCIInboundPackets(stream: stream), Continuation(base: continuation))
    }

    /// The same packets, with `observer` called on each as the consumer receives it, before the
    /// consumer sees it (how `CaptureTap` records inbound packets without a task of its own).
    public func observing(_ observer: @escaping @Sendable (HCIPacket) -> Void) -> HCIInboundPackets {
        HCIInboundPackets(stream: stream, observers: observers + [observer])
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator(), observers: observers)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        public typealias Element = HCIPacket
        public typealias Failure = TransportError

        @usableFromInline var base: AsyncStream<Result<HCIPacket, TransportError>>.AsyncIterator
        @usableFromInline let observers: [@Sendable (HCIPacket) -> Void]

        @inlinable
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(TransportError) -> HCIPacket? {
            guard let result = await base.next(isolation: actor) else { return nil }
            let packet = try result.get()
            for observer in observers { observer(packet) }
            return packet
        }

        @inlinable
        public mutating func next() async throws(TransportError) -> HCIPacket? {
            try await next(isolation: nil)
        }
    }

    /// Feeds an `HCIInboundPackets` sequence.
    public struct Continuation: Sendable {
        let base: AsyncStream<Result<HCIPacket, TransportError>>.Continuation

        /// Delivers one packet (after all packets yielded before it).
        public func yield(_ packet: HCIPacket) {
            base.yield(.success(packet))
        }

        /// Ends the sequence: normally when `error` is nil, else the consumer's loop throws `error`.
        public func finish(throwing error: TransportError? = nil) {
            if let error { base.yield(.failure(error)) }
            base.finish()
        }
    }
}
