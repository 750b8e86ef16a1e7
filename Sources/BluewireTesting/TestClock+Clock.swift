import BluewireCore

extension TestClock: Clock {
    /// A point in the test clock's virtual time (a `MonotonicInstant` usable as a Swift `InstantProtocol`).
    public struct Instant: InstantProtocol, CustomStringConvertible {
        public var monotonic: MonotonicInstant

        public init(_ monotonic: MonotonicInstant) { self.monotonic = monotonic }

        public func advanced(by duration: Duration) -> Instant {
            Instant(monotonic + TimeSpan(duration))
        }

        public func duration(to other: Instant) -> Duration {
            .microseconds((other.monotonic - monotonic).microseconds)
        }

        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.monotonic < rhs.monotonic }

        public var description: String { monotonic.description }
    }

    public var now: Instant { Instant(monotonicNow) }

    /// Virtual time has microsecond resolution (that of `MonotonicInstant`).
    public var minimumResolution: Duration { .microseconds(1) }

    /// Suspends until a test advances the clock to `deadline`; returns at once if it has passed.
    /// Throws `CancellationError` if the task is cancelled first (the sleeper is then removed).
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await sleep(until: deadline.monotonic)
    }

    /// Suspends until a test advances the clock to `deadline` (see `sleep(until:tolerance:)`).
    public func sleep(until deadline: MonotonicInstant) async throws {
        try Task.checkCancellation()
        let sequence: UInt64? = state.withLock { state in
            deadline <= state.now ? nil : state.takeSequence()
        }
        guard let sequence else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (registered, ready) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                    if state.cancelledSleepers.remove(sequence) != nil { return (false, []) }
                    state.insert(Entry(deadline: deadline, sequence: sequence, work: .sleeper(continuation)))
                    return (true, state.satisfiedWaiters())
                }
                if !registered { continuation.resume(throwing: CancellationError()) }
                for waiter in ready { waiter.resume() }
            }
        } onCancel: {
            let continuation: CheckedContinuation<Void, any Error>? = state.withLock { state in
                if let index = state.entries.firstIndex(where: { $0.sequence == sequence }) {
                    let entry = state.entries.remove(at: index)
                    if case .sleeper(let continuation) = entry.work { return continuation }
                    return nil
                }
                state.cancelledSleepers.insert(sequence)
                return nil
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Suspends for `span` of virtual time.
    public func sleep(for span: TimeSpan) async throws {
        try await sleep(until: monotonicNow + span)
    }

    /// The number of tasks currently asleep on this clock.
    public var sleeperCount: Int {
        state.withLock { $0.sleeperCount }
    }

    /// Suspends until at least `count` tasks are asleep on this clock. A test calls this before advancing
    /// time so that the code under test has really started waiting (no sleeping, no polling).
    public func waitForSleepers(count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.sleeperCount >= count { return true }
                state.sleeperWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Advances virtual time like `advance(by:)`, and after each action or sleeper it resumes lets the
    /// resumed tasks run before going on, so that code awaiting the clock observes each deadline in turn.
    public func advance(by span: TimeSpan) async {
        await advance(to: monotonicNow + span)
    }

    /// Async form of `advance(to:)`: yields to resumed tasks after each due entry and at the end.
    public func advance(to target: MonotonicInstant) async {
        await Self.yieldToOtherTasks()
        while let entry = popDue(notAfter: target) {
            run(entry)
            await Self.yieldToOtherTasks()
        }
        settleTime(at: target)
        await Self.yieldToOtherTasks()
    }

    /// Gives tasks made runnable by a resume a chance to run before the caller continues. Swift has no way
    /// to wait for "all other tasks are idle"; bouncing through a few low-priority detached tasks lets the
    /// cooperative pool drain the ready queue in practice.
    static func yieldToOtherTasks(rounds: Int = 8) async {
        for _ in 0..<rounds {
            await Task.detached(priority: .background) { await Task.yield() }.value
        }
    }
}

extension TimeSpan {
    /// The span of a Swift `Duration`, truncated to whole microseconds.
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self.init(microseconds: seconds &* 1_000_000 &+ attoseconds / 1_000_000_000_000)
    }

}
