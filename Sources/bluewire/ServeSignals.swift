import Dispatch
import Foundation

/// SIGINT and SIGTERM as an asynchronous sequence, so `serve` can shut down cleanly (stop
/// advertising, disconnect, flush the capture) instead of dying mid-write.
enum ServeSignals {
    static func stopRequests() -> AsyncStream<Int32> {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        let queue = DispatchQueue(label: "bluewire.serve.signals")
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            // The default action would end the process before the handler runs.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            sources.append(source)
        }
        // The sources live as long as the stream is consumed.
        let keep = SignalSources(sources)
        continuation.onTermination = { _ in keep.cancel() }
        return stream
    }

    /// Runs `serving` until SIGINT or SIGTERM arrives, and returns it; nil when `serving` returned
    /// first (the host's events ended with the controller connection).
    static func serve(until stop: AsyncStream<Int32>, _ serving: @escaping @Sendable () async -> Void) async -> Int32? {
        await withTaskGroup(of: Int32?.self) { group in
            group.addTask {
                await serving()
                return nil
            }
            group.addTask { await stop.first { _ in true } }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}

/// Keeps the dispatch sources alive; cancelled once, from the stream's termination handler.
final class SignalSources: @unchecked Sendable {
    // @unchecked: the array is written only in init; `cancel` reads it (DispatchSource is thread-safe).
    private let sources: [any DispatchSourceSignal]
    init(_ sources: [any DispatchSourceSignal]) { self.sources = sources }
    func cancel() { for source in sources { source.cancel() } }
}
