import BluewireCore

extension EngineHost {
    /// Keeps a timer task sleeping until the engine's next deadline (`HostEngine.nextDeadline`), so
    /// `advanceTime` runs when a command, an ATT transaction or a connection attempt times out.
    ///
    /// Every ATT request moves the deadline (30 s after it, Core Vol 3 Part F §3.3.3) and every
    /// response clears it, so replacing the task each time would cost a task, a clock registration
    /// and a cancellation per request. On the machine's clock (`SystemHostClock`) a timer already
    /// armed for an earlier time is kept instead: it wakes early, `timerFired` finds nothing due
    /// and arms the timer for the deadline then. Only a deadline earlier than the armed one replaces
    /// it, so no timeout fires later than before. On a virtual clock (tests, replays) the sleepers are
    /// visible — a replay moves time to the earliest one when the host is idle — so there the timer
    /// follows the deadline exactly.
    func armTimer() {
        // After `finish()` (which cancelled the timer) nothing may start another: a task asleep on
        // a test clock or a replay's would outlive the host.
        guard isOpen || readerTask == nil else { return }
        let deadline = engine.nextDeadlineInPlace()
        if let task = timerTask, let armed = timerDeadline {
            if deadline == armed { return }
            if keepsEarlierTimer, deadline.map({ armed < $0 }) ?? true { return }
            task.cancel()
        }
        timerTask = nil
        timerDeadline = deadline
        guard let deadline else { return }
        let clock = self.clock
        timerGeneration &+= 1
        let generation = timerGeneration
        timerTask = Task { [weak self] in
            do { try await clock.sleep(until: deadline) } catch { return }
            await self?.timerFired(generation: generation)
        }
    }

    /// A timer woke. If it was replaced after it woke (its cancellation came too late to stop it),
    /// it does nothing: clearing `timerTask` here would drop the replacement without cancelling it,
    /// and that task would sleep on past `close()` (on a virtual clock that nobody advances, for
    /// ever). The replacement sleeps until the engine's next deadline as it stood when it was armed,
    /// and wakes at once if that is already past, so nothing due is missed.
    func timerFired(generation: UInt64) {
        guard generation == timerGeneration else { return }
        timerTask = nil
        timerDeadline = nil
        engine.advanceTime(to: clock.now)
        drain()
    }
}

extension HostEngine {
    /// `nextDeadline`, read through an inout access.
    ///
    /// `armTimer` runs at the end of every drain. Read as `engine.nextDeadline`, the getter (in
    /// another module, so not inlined) takes the engine by reference, and Swift gave it a temporary
    /// copy of the whole struct read out of the actor's storage: a retain and a release of every
    /// reference the engine holds, once per drain (perf on the notification path showed the copy,
    /// `HostEngine`'s value-witness copy under `armTimer`). An inout access passes the storage's
    /// address instead.
    mutating func nextDeadlineInPlace() -> MonotonicInstant? { nextDeadline }
}
