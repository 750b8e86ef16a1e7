import Foundation

/// Standard input cut into SDUs, read on a thread of its own (blocking reads do not belong on the
/// cooperative pool) one SDU ahead of the sender: the next read starts only once the previous SDU
/// was taken, so a slow channel stops the reading (back-pressure) instead of buffering stdin.
///
/// Without `lines`, each read(2) of at most `maximum` octets is one SDU (a pipe or terminal
/// delivers what was written so far). With `lines`, each line including its newline is one SDU,
/// cut at `maximum` octets; what follows the last newline at end of input is one more.
final class StdinSDUs: @unchecked Sendable {
    // @unchecked: `pending` and `eof` are touched by the reading thread only; the stream and the
    // semaphore are thread-safe.
    let stream: AsyncStream<[UInt8]>
    private let continuation: AsyncStream<[UInt8]>.Continuation
    private let taken = DispatchSemaphore(value: 0)
    private let maximum: Int
    private let lines: Bool
    private var pending: [UInt8] = []

    init(maximum: Int, lines: Bool) {
        self.maximum = max(1, maximum)
        self.lines = lines
        (stream, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .unbounded)
        Thread.detachNewThread { [self] in run() }
    }

    /// The sender took an SDU: the next one may be read.
    func next() { taken.signal() }

    private func emit(_ sdu: [UInt8]) {
        continuation.yield(sdu)
        taken.wait()
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: maximum)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, maximum) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            guard lines else {
                emit(Array(buffer[0..<count]))
                continue
            }
            pending.append(contentsOf: buffer[0..<count])
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) ?? (pending.count >= maximum ? maximum - 1 : nil) {
                let end = min(newline + 1, maximum)
                emit(Array(pending[0..<end]))
                pending.removeFirst(end)
            }
        }
        if !pending.isEmpty { emit(pending) }
        continuation.finish()
    }
}
