import BluewireCore
import BluewireHCI

extension RemotePeripheral {
    /// An auto-connected operation starts: the idle timer stops.
    public func operationStarted() async {
        activeOperations += 1
        stopIdleTimer()
    }

    /// An auto-connected operation ended: with `idleDisconnect` set and nothing else running, the idle
    /// timer starts. Its deadline is fixed now, on the host's clock, so a test advancing a virtual
    /// clock past it sees the disconnection whenever the timer task gets to sleep.
    public func operationEnded() async {
        activeOperations = max(0, activeOperations - 1)
        guard let idleTimeout, activeOperations == 0, slot.link != nil, !hostEnded else { return }
        stopIdleTimer()
        let generation = idleTimer.generation
        let clock = host.clock
        let deadline = clock.now + TimeSpan(idleTimeout)
        idleTimer.task = Task {
            do {
                try await clock.sleep(until: deadline)
            } catch {
                return
            }
            await self.idleTimerExpired(generation)
        }
    }

    func stopIdleTimer() {
        idleTimer.generation &+= 1
        idleTimer.task?.cancel()
        idleTimer.task = nil
    }

    private func idleTimerExpired(_ generation: UInt64) async {
        guard generation == idleTimer.generation, activeOperations == 0, slot.link != nil else { return }
        // An operation queued but not yet started counts as activity too.
        guard await queue.runningID == nil, await queue.queuedIDs.isEmpty else { return }
        guard generation == idleTimer.generation else { return }
        idleTimer.task = nil
        emit(.idleDisconnect)
        await dropLink(reason: .remoteUserTerminatedConnection)
    }
}

extension TimeSpan {
    /// `duration` in whole microseconds (finer parts are dropped; negative durations count as zero).
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self.init(microseconds: max(0, seconds &* 1_000_000 &+ attoseconds / 1_000_000_000_000))
    }
}
