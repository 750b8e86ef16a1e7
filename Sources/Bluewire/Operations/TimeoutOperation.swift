/// Fails `wrapped` with `OperationError.timedOut` if it has not finished `timeout` after it started,
/// measured on `clock`.
///
/// The clock is injected so tests advance time by hand instead of sleeping (a 30 s ATT transaction
/// timeout, Core Vol 3 Part F §3.3.3, is tested in microseconds). When the timeout fires, `wrapped`'s
/// task is cancelled and this operation returns once it has stopped; operations honour cancellation
/// (see `GATTOperation`), so the bearer is never used by two operations at once.
public struct TimeoutOperation<Wrapped: GATTOperation, C: Clock>: GATTOperation where C.Duration == Duration {
    public typealias Result = Wrapped.Result

    public let wrapped: Wrapped
    public let timeout: Duration
    public let clock: C

    public init(_ wrapped: Wrapped, timeout: Duration, clock: C) {
        self.wrapped = wrapped
        self.timeout = timeout
        self.clock = clock
    }

    public var requirements: OperationRequirements { wrapped.requirements }

    public func execute(on context: any ATTRequestPerformer) async throws -> Wrapped.Result {
        let deadline = clock.now.advanced(by: timeout)
        return try await withThrowingTaskGroup(of: Wrapped.Result.self) { group in
            group.addTask { try await wrapped.execute(on: context) }
            group.addTask { [clock, timeout] in
                try await clock.sleep(until: deadline, tolerance: nil)
                throw OperationError.timedOut(after: timeout)
            }
            defer { group.cancelAll() }
            // The first child to finish decides: a value, the operation's own error, or the timeout.
            guard let first = try await group.next() else { throw OperationError.timedOut(after: timeout) }
            return first
        }
    }
}

extension TimeoutOperation where C == ContinuousClock {
    /// A timeout measured on the continuous (wall) clock.
    public init(_ wrapped: Wrapped, timeout: Duration) {
        self.init(wrapped, timeout: timeout, clock: ContinuousClock())
    }
}

extension GATTOperation {
    /// This operation, failing with `OperationError.timedOut` after `timeout` on `clock`.
    public func timeout<C: Clock>(_ timeout: Duration, clock: C) -> TimeoutOperation<Self, C>
    where C.Duration == Duration {
        TimeoutOperation(self, timeout: timeout, clock: clock)
    }

    /// This operation, failing with `OperationError.timedOut` after `timeout` of wall-clock time.
    public func timeout(_ timeout: Duration) -> TimeoutOperation<Self, ContinuousClock> {
        TimeoutOperation(self, timeout: timeout)
    }
}
