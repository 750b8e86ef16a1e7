import Synchronization

/// A submitted operation, and its outcome handed to whoever awaits it, exactly once, whichever comes
/// first: the operation finishing, a cancellation, or `failAll`. Waiters are resumed without waiting
/// for the operation itself to stop, which is what guarantees that no caller hangs on a dead
/// connection. The queue keeps this object as the job, so a submission allocates one object.
final class OperationResultBox<Value: Sendable, Failure: OperationFailure>: Sendable {
    /// What the queue runs (decorated): `run(on:)`.
    let operation: any GATTOperation<Value, Failure>

    /// Unsafe, not checked: a checked continuation allocates a canary per wait (one allocation per
    /// operation). Each is resumed exactly once, by the one `settle` that finds the box waiting, or
    /// at once when it is already settled; the lock decides which.
    private typealias Waiter = UnsafeContinuation<Result<Value, Failure>, Never>

    private enum State {
        /// The usual one awaiting task in `first`, so that it needs no array (an array grown from
        /// empty was one allocation per operation); any other in `more`.
        case waiting(first: Waiter?, more: [Waiter])
        case settled(Result<Value, Failure>)
    }

    private let state = Mutex<State>(.waiting(first: nil, more: []))

    init(running operation: any GATTOperation<Value, Failure>) {
        self.operation = operation
    }

    /// Settles the box; returns false (and changes nothing) if it was already settled.
    @discardableResult
    func settle(_ result: Result<Value, Failure>) -> Bool {
        let waiters: (first: Waiter?, more: [Waiter])? = state.withLock { state in
            guard case .waiting(let first, let more) = state else { return nil }
            state = .settled(result)
            return (first, more)
        }
        guard let waiters else { return false }
        waiters.first?.resume(returning: result)
        for waiter in waiters.more { waiter.resume(returning: result) }
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
        await withUnsafeContinuation { continuation in
            let ready: Result<Value, Failure>? = state.withLock { state in
                switch state {
                case .waiting(nil, let more):
                    state = .waiting(first: continuation, more: more)
                    return nil
                case .waiting(let first, var more):
                    more.append(continuation)
                    state = .waiting(first: first, more: more)
                    return nil
                case .settled(let result):
                    return result
                }
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

/// What `GATTOperationQueue` keeps of a submitted operation, whatever its result and failure types.
protocol QueuedJob: AnyObject, Sendable {
    /// Runs the operation on `performer` and settles its outcome.
    nonisolated(nonsending) func run(on performer: any ATTRequestPerformer) async
    /// Settles the outcome with the queue's end for it (`OperationFailure.init(_:)`), unless settled.
    func fail(_ end: OperationError)
    var isSettled: Bool { get }
}

extension OperationResultBox: QueuedJob {
    nonisolated(nonsending) func run(on performer: any ATTRequestPerformer) async {
        do throws(Failure) {
            settle(.success(try await operation.execute(on: performer)))
        } catch {
            settle(.failure(error))
        }
    }

    func fail(_ end: OperationError) {
        settle(.failure(Failure(end)))
    }
}
