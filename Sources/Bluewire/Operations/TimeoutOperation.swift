import BluewireCore

/// Fails `wrapped` with `OperationError.timedOut` if it has not finished `timeout` after it started,
/// measured on `clock`.
///
/// The clock is a `HostClock`, the same protocol the Host's own timers use, so one injected clock
/// drives every timer a test cares about: a test passes its `TestClock` and advances time by hand
/// instead of sleeping (a 30 s ATT transaction timeout, Core Vol 3 Part F §3.3.3, is tested in
/// microseconds), and an application passes `host.clock` to time operations like the Host does.
/// When the timeout fires, `wrapped`'s task is cancelled and this operation returns once it has
/// stopped; operations honour cancellation (see `GATTOperation`), so the bearer is never used by two
/// operations at once.
public struct TimeoutOperation<Wrapped: GATTOperation, C: HostClock>: GATTOperation {
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
        // The clock counts whole microseconds; a finer timeout is truncated.
        let (seconds, attoseconds) = timeout.components
        let deadline = clock.now + TimeSpan(microseconds: seconds &* 1_000_000 &+ attoseconds / 1_000_000_000_000)
        return try await withThrowingTaskGroup(of: Wrapped.Result.self) { group in
            group.addTask { try await wrapped.execute(on: context) }
            group.addTask { [clock, timeout] in
                try await clock.sleep(until: deadline)
                throw OperationError.timedOut(after: timeout)
            }
            defer { group.cancelAll() }
            // The first child to finish decides: a value, the operation's own error, or the timeout.
            guard let first = try await group.next() else { throw OperationError.timedOut(after: timeout) }
            return first
        }
    }
}

extension TimeoutOperation where C == SystemHostClock {
    /// A timeout measured on the machine's monotonic clock.
    public init(_ wrapped: Wrapped, timeout: Duration) {
        self.init(wrapped, timeout: timeout, clock: SystemHostClock())
    }
}

extension GATTOperation {
    /// This operation, failing with `OperationError.timedOut` after `timeout` on `clock` (a test's
    /// `TestClock`, or `host.clock`).
    public func timeout<C: HostClock>(_ timeout: Duration, clock: C) -> TimeoutOperation<Self, C> {
        TimeoutOperation(self, timeout: timeout, clock: clock)
    }

    /// This operation, failing with `OperationError.timedOut` after `timeout` on the machine's monotonic clock.
    public func timeout(_ timeout: Duration) -> TimeoutOperation<Self, SystemHostClock> {
        TimeoutOperation(self, timeout: timeout)
    }
}
