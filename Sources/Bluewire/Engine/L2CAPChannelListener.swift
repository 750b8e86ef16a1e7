import BluewireHostEngine
import BluewireL2CAP

/// Channels peers open to an SPSM we listen on (`host.listen(...)`), as they open. The engine
/// accepts a request when the SPSM is registered and the link meets the listener's security
/// (Core Vol 3 Part A §4.23: otherwise it refuses with Insufficient Authentication/Encryption/Key
/// Size); each channel accepted is yielded here, and `stop()` refuses later requests with "SPSM not
/// supported" (open channels stay open).
public final class L2CAPChannelListener: AsyncSequence, Sendable {
    public typealias Element = L2CAPChannel
    public typealias Failure = Never

    public let psm: SPSM
    let host: EngineHost
    let stream: AsyncStream<L2CAPChannel>
    let continuation: AsyncStream<L2CAPChannel>.Continuation

    init(host: EngineHost, psm: SPSM) {
        self.host = host
        self.psm = psm
        (stream, continuation) = AsyncStream<L2CAPChannel>.makeStream(bufferingPolicy: .unbounded)
    }

    public func makeAsyncIterator() -> AsyncStream<L2CAPChannel>.Iterator { stream.makeAsyncIterator() }

    /// Stops accepting channels to `psm` and ends the sequence.
    public func stop() async {
        await host.stopListening(self)
    }

    func accepted(_ channel: L2CAPChannel) { continuation.yield(channel) }
    func finish() { continuation.finish() }
}
