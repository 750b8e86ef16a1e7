import BluewireCore

/// Fails `wrapped` with `OperationError.timedOut` (in `wrapped`'s error type) if it has not finished
/// `timeout` after it started, measured on `clock`.
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
    public typealias Failure = Wrapped.Failure

    public let wrapped: Wrapped
    public let timeout: Duration
    public let clock: C

    public init(_ wrapped: Wrapped, timeout: Duration, clock: C) {
        self.wrapped = wrapped
        self.timeout = timeout
        self.clock = clock
    }

    public var requirements: OperationRequirements { wrapped.requirements }

    public nonisolated(nonsending) func execute(on context: any ATTRequestPerformer) async throws(Wrapped.Failure) -> Wrapped.Result {
        // The clock counts whole microseconds; a finer timeout is truncated.
        let (seconds, attoseconds) = timeout.components
        let deadline = clock.now + TimeSpan(microseconds: seconds &* 1_000_000 &+ attoseconds / 1_000_000_000_000)
        let outcome = await withTaskGroup(of: Outcome.self) { group -> Swift.Result<Wrapped.Result, Wrapped.Failure> in
            group.addTask {
                do throws(Wrapped.Failure) {
                    return .finished(.success(try await wrapped.execute(on: context)))
                } catch {
                    return .finished(.failure(error))
                }
            }
            group.addTask { [clock] in
                do {
                    try await clock.sleep(until: deadline)
                    return .timerFired
                } catch {
                    return .timerCancelled
                }
            }
            defer { group.cancelAll() }
            // The first child to finish decides: a value, the operation's own error, or the timeout.
            // A timer stopped by this task's cancellation decides nothing: the operation, cancelled
            // too, reports its cancellation in its own words.
            while let next = await group.next() {
                switch next {
                case .finished(let result): return result
                case .timerFired: return .failure(Wrapped.Failure(.timedOut(after: timeout)))
                case .timerCancelled: continue
                }
            }
            return .failure(Wrapped.Failure(.cancelled(nil)))
        }
        return try outcome.get()
    }

    /// What a child of the race reports.
    private enum Outcome: Sendable {
        case finished(Swift.Result<Wrapped.Result, Wrapped.Failure>)
        case timerFired
        case timerCancelled
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
