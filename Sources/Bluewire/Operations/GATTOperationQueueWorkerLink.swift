import Synchronization

/// Where a `GATTOperationQueue`'s worker task waits between operations.
///
/// The worker outlives each operation: when the queue is empty it parks here, and the next
/// submission wakes it. One task, and the task-local memory its operations' frames grew into, then
/// serves every operation of the queue, instead of a new task (and new task memory) per operation.
///
/// The link holds its queue weakly, and a parked worker holds only the link, so a parked worker does
/// not keep its queue alive: the queue's deinit closes the link, which ends the worker.
final class GATTOperationQueueWorkerLink: Sendable {
    private enum State {
        /// The worker is taking operations from the queue.
        case running
        /// An operation came while the worker was running: its next `park()` returns at once.
        case wakeRequested
        /// The worker waits here.
        case parked(UnsafeContinuation<Bool, Never>)
        /// The queue is gone, or replaced this worker: the worker ends.
        case closed
    }

    /// The queue the worker serves; nil once it is gone.
    weak let queue: GATTOperationQueue?
    private let state = Mutex<State>(.running)

    init(queue: GATTOperationQueue) {
        self.queue = queue
    }

    /// Wakes a parked worker, or makes a running one look at the queue again before it parks.
    func wake() {
        let parked: UnsafeContinuation<Bool, Never>? = state.withLock { state in
            switch state {
            case .parked(let continuation):
                state = .running
                return continuation
            case .running:
                state = .wakeRequested
                return nil
            case .wakeRequested, .closed:
                return nil
            }
        }
        parked?.resume(returning: true)
    }

    /// Ends the worker: a parked one returns from `park()` with false, a running one at its next park.
    func close() {
        let parked: UnsafeContinuation<Bool, Never>? = state.withLock { state in
            defer { state = .closed }
            if case .parked(let continuation) = state { return continuation }
            return nil
        }
        parked?.resume(returning: false)
    }

    /// Waits for `wake()` (true: look at the queue again) or `close()` (false: end), on the caller's
    /// executor (the queue's).
    func park(isolation: isolated (any Actor)? = #isolation) async -> Bool {
        await withUnsafeContinuation(isolation: isolation) { (continuation: UnsafeContinuation<Bool, Never>) in
            let now: Bool? = state.withLock { state in
                switch state {
                case .running:
                    state = .parked(continuation)
                    return nil
                case .wakeRequested:
                    state = .running
                    return true
                case .closed, .parked:
                    // One worker per link parks at a time; a second park would be a bug, so it ends.
                    return false
                }
            }
            if let now { continuation.resume(returning: now) }
        }
    }
}
