import Synchronization

/// Hands one operation's outcome to whoever awaits it, exactly once, whichever comes first: the
/// operation finishing, a cancellation, or `failAll`. Waiters are resumed without waiting for the
/// operation itself to stop, which is what guarantees that no caller hangs on a dead connection.
final class OperationResultBox<Value: Sendable, Failure: Error>: Sendable {
    private enum State {
        case waiting([CheckedContinuation<Result<Value, Failure>, Never>])
        case settled(Result<Value, Failure>)
    }

    private let state = Mutex<State>(.waiting([]))

    init() {}

    /// Settles the box; returns false (and changes nothing) if it was already settled.
    @discardableResult
    func settle(_ result: Result<Value, Failure>) -> Bool {
        let waiters: [CheckedContinuation<Result<Value, Failure>, Never>]? = state.withLock { state in
            guard case .waiting(let waiters) = state else { return nil }
            state = .settled(result)
            return waiters
        }
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(returning: result) }
        return true
    }

    var isSettled: Bool {
        state.withLock { state in
            if case .settled = state { return true }
            return false
        }
    }

    /// The outcome, once settled.
    func result() async -> Result<Value, Failure> {
        await withCheckedContinuation { continuation in
            let ready: Result<Value, Failure>? = state.withLock { state in
                switch state {
                case .waiting(var waiters):
                    waiters.append(continuation)
                    state = .waiting(waiters)
                    return nil
                case .settled(let result):
                    return result
                }
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
