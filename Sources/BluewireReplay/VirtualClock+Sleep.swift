import BluewireCore

/// The async side of `VirtualClock`: tasks that sleep on it, and advancing time from async code.
///
/// A sleeper is an entry in the same deadline-ordered list as scheduled actions, so actions and sleepers
/// due at the same instant run in the order they were registered, and a sleeper is resumed exactly when
/// an `advance` reaches its deadline: never early, never on a guess about wall-clock idleness.
extension VirtualClock {
    /// Suspends until a test advances the clock to `deadline`; returns at once if it has passed.
    /// Throws `CancellationError` if the task is cancelled first (the sleeper is then removed).
    public func sleep(until deadline: MonotonicInstant) async throws {
        try await sleep(until: deadline, onRegistered: nil)
    }

    /// `sleep(until:)`, calling `onRegistered` (outside the clock's lock, in the sleeping task) once the
    /// sleeper is in the list: the replay clock advances time from there when the host has gone idle.
    func sleep(until deadline: MonotonicInstant, onRegistered: (@Sendable () -> Void)?) async throws {
        try Task.checkCancellation()
        let sequence: UInt64? = state.withLock { state in
            deadline <= state.now ? nil : state.takeSequence()
        }
        guard let sequence else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (registered, ready, changed) = state.withLock { state in
                    if state.cancelledSleepers.remove(sequence) != nil { return (false, [CheckedContinuation<Void, Never>](), state.sleepersChanged) }
                    state.insert(Entry(deadline: deadline, sequence: sequence, work: .sleeper(continuation)))
                    return (true, state.satisfiedWaiters(), state.sleepersChanged)
                }
                if !registered { continuation.resume(throwing: CancellationError()) }
                for waiter in ready { waiter.resume() }
                if registered {
                    onRegistered?()
                    changed?()
                }
            }
            // Running again: tell an async `advance` that resumed this sleeper that it may move on (and
            // forget a cancellation that raced with the wake-up and found no entry to remove).
            let (acknowledgement, changed) = state.withLock { state in
                state.cancelledSleepers.remove(sequence)
                return (state.wakeAcknowledgements.removeValue(forKey: sequence), state.sleepersChanged)
            }
            acknowledgement?.resume()
            changed?()
        } onCancel: {
            let (continuation, changed) = state.withLock { state -> (CheckedContinuation<Void, any Error>?, (@Sendable () -> Void)?) in
                if let index = state.entries.firstIndex(where: { $0.sequence == sequence }) {
                    let entry = state.entries.remove(at: index)
                    if case .sleeper(let continuation) = entry.work { return (continuation, state.sleepersChanged) }
                    return (nil, nil)
                }
                state.cancelledSleepers.insert(sequence)
                return (nil, nil)
            }
            continuation?.resume(throwing: CancellationError())
            changed?()
        }
    }

    /// Calls `handler` (outside the clock's lock, on the task concerned) whenever a task starts
    /// sleeping on this clock or stops: a sleeper that registers, one cancelled, and one resumed by an
    /// advance once it runs again. For a test that waits for the clock's sleepers among other things
    /// (`waitForSleepers` covers "at least"); nil removes it.
    public func onSleepersChanged(_ handler: (@Sendable () -> Void)?) {
        state.withLock { $0.sleepersChanged = handler }
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

    /// Advances virtual time like `advance(by:)`, from async code (see `advance(to:)`).
    public func advance(by span: TimeSpan) async {
        await advance(to: monotonicNow + span)
    }

    /// Moves time forward to `target` (never backwards), running due actions and resuming due sleepers
    /// in deadline order, ties in registration order.
    ///
    /// After resuming a sleeper it waits until that sleeper's task is running again before it moves
    /// time further, so sleepers wake strictly one after another in deadline order, interleaved with
    /// due actions, and when this call returns every sleeper due by `target` has resumed. What a woken
    /// task does next is up to it: a test awaits the outcome it expects (an operation's value, a
    /// `waitForSleepers` for the next timer) instead of guessing when other tasks are done. The one
    /// `Task.yield()` at the end keeps a loop that pumps the clock from hogging the cooperative pool.
    public func advance(to target: MonotonicInstant) async {
        while let entry = popDue(notAfter: target) {
            switch entry.work {
            case .action(let action):
                action()
            case .sleeper(let sleeper):
                await withCheckedContinuation { (acknowledged: CheckedContinuation<Void, Never>) in
                    state.withLock { $0.wakeAcknowledgements[entry.sequence] = acknowledged }
                    sleeper.resume()
                }
            }
        }
        settleTime(at: target)
        await Task.yield()
    }
}
