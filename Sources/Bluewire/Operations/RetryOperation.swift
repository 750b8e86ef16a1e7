/// Which failures of operations failing with `Failure` are worth trying again.
public struct RetryPolicy<Failure: OperationFailure>: Sendable {
    /// Decides from the error (and the 1-based attempt that failed) whether to try again.
    public let shouldRetry: @Sendable (_ error: Failure, _ attempt: Int) -> Bool

    public init(shouldRetry: @escaping @Sendable (_ error: Failure, _ attempt: Int) -> Bool) {
        self.shouldRetry = shouldRetry
    }

    /// Retry when an attempt timed out (`OperationError.timedOut`, in the operation's error type).
    public static var timeouts: RetryPolicy {
        RetryPolicy { error, _ in
            if case .timedOut? = error.queueEnd { return true }
            return false
        }
    }

    /// Never retry.
    public static var never: RetryPolicy { RetryPolicy { _, _ in false } }
}

/// Runs `wrapped` up to `attempts` times, as long as each failure is one `policy` calls retryable.
///
/// Cancellation and disconnection are never retried, whatever the policy says: the first means the
/// caller no longer wants the result, the second that there is no bearer to retry on.
public struct RetryOperation<Wrapped: GATTOperation>: GATTOperation {
    public typealias Result = Wrapped.Result
    public typealias Failure = Wrapped.Failure

    public let wrapped: Wrapped
    public let attempts: Int
    public let policy: RetryPolicy<Wrapped.Failure>

    /// - Parameters:
    ///   - wrapped: the operation to run again when it fails.
    ///   - attempts: total attempts, including the first (values below 1 count as 1).
    ///   - policy: decides from each failure whether another attempt is worth it.
    public init(_ wrapped: Wrapped, attempts: Int, policy: RetryPolicy<Wrapped.Failure>) {
        self.wrapped = wrapped
        self.attempts = max(1, attempts)
        self.policy = policy
    }

    public var requirements: OperationRequirements { wrapped.requirements }

    public nonisolated(nonsending) func execute(on context: any ATTRequestPerformer) async throws(Wrapped.Failure) -> Wrapped.Result {
        var attempt = 1
        while true {
            do throws(Wrapped.Failure) {
                return try await wrapped.execute(on: context)
            } catch {
                guard attempt < attempts, !Task.isCancelled, !Self.isFinal(error), policy.shouldRetry(error, attempt)
                else { throw error }
                attempt += 1
            }
        }
    }

    private static func isFinal(_ error: Wrapped.Failure) -> Bool {
        switch error.queueEnd {
        case .cancelled?, .disconnected?, .notConnected?: true
        default: false
        }
    }
}

extension GATTOperation {
    /// This operation, tried up to `attempts` times while `policy` calls the failure retryable.
    public func retry(attempts: Int, when policy: RetryPolicy<Failure>) -> RetryOperation<Self> {
        RetryOperation(self, attempts: attempts, policy: policy)
    }
}
