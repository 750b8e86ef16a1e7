import Dispatch
import Foundation

/// The first SIGINT or SIGTERM, awaited: examples stop advertising and disconnect before exiting.
public enum StopSignal {
    /// Returns the signal when SIGINT or SIGTERM arrives (the default action is replaced from this
    /// call on), or nil when the waiting task is cancelled first (the program is ending normally:
    /// the caller must not treat that as a signal).
    public static func wait() async -> Int32? {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        let queue = DispatchQueue(label: "example.signals")
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            sources.append(source)
        }
        var iterator = stream.makeAsyncIterator()
        let number = await iterator.next()
        for source in sources { source.cancel() }
        return number
    }
}

/// Lines of standard input, read on a thread of their own (reads block); finishes at end of input.
public func standardInputLines() -> AsyncStream<String> {
    let (stream, continuation) = AsyncStream<String>.makeStream()
    Thread.detachNewThread {
        while let line = readLine() { continuation.yield(line) }
        continuation.finish()
    }
    return stream
}
