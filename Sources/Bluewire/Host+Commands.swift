import BluewireCore
import BluewireHCI

extension BluetoothHost {
    /// Sends an HCI command and waits for its Command Complete or Command Status.
    ///
    /// Commands wait for the controller's command credits (Num_HCI_Command_Packets); each has a
    /// timeout (the configuration's, 2 s by default) because some controllers answer unknown commands
    /// with nothing at all. A non-zero status fails with the status's name.
    public func send(_ command: HCICommand, timeout: TimeSpan? = nil) async throws(HostError) -> CommandResponse {
        guard phase == .starting || phase == .running else { throw .notRunning }
        let result = await sendCommandResult(command, timeout: timeout)
        switch result {
        case .success(let response): return response
        case .failure(let error):
            // Cancelled with everything else pending: say why (hardware error, transport gone).
            if case .cancelled = error, let cause = commandCancellationCause { throw cause }
            throw .command(error)
        }
    }

    func sendCommandResult(_ command: HCICommand, timeout: TimeSpan? = nil) async -> Result<CommandResponse, CommandError> {
        if let engineHost { return await engineCommand(engineHost, command, timeout: timeout) }
        guard phase == .starting || phase == .running else { return .failure(.cancelled(command.opcode)) }
        let id = commandFlow.enqueue(command, timeout: timeout)
        return await withCheckedContinuation { continuation in
            commandWaiters[id] = continuation
            pumpCommands()
        }
    }

    /// Sends every queued command the controller has credit for.
    func pumpCommands() {
        let now = self.now
        while let next = commandFlow.nextToSend(now: now) {
            log.hci.trace("command \(next.command.opcode)")
            write(next.command.packet)
        }
        rescheduleTimer()
    }

    func complete(_ completion: CommandCompletion) {
        if case .failure(let error) = completion.result {
            log.hci.debug("command failed: \(error)")
        }
        commandWaiters.removeValue(forKey: completion.id)?.resume(returning: completion.result)
    }

    // MARK: Timers

    /// The earliest deadline any layer has asked for.
    var nextDeadline: MonotonicInstant? {
        var earliest = commandFlow.nextDeadline
        func consider(_ deadline: MonotonicInstant?) {
            guard let deadline else { return }
            if earliest == nil || deadline < earliest! { earliest = deadline }
        }
        for link in links.values { consider(link.bearer.deadline) }
        consider(pendingConnection?.deadline)
        consider(scanSession?.deadline)
        return earliest
    }

    /// Keeps one timer task sleeping until the earliest deadline.
    func rescheduleTimer() {
        guard let deadline = nextDeadline else {
            timerTask?.cancel()
            timerTask = nil
            scheduledDeadline = nil
            return
        }
        if let scheduledDeadline, scheduledDeadline == deadline, timerTask != nil { return }
        timerTask?.cancel()
        scheduledDeadline = deadline
        let clock = self.clock
        timerTask = Task { [weak self] in
            do { try await clock.sleep(until: deadline) } catch { return }
            await self?.timerFired()
        }
    }

    func timerFired() {
        timerTask = nil
        scheduledDeadline = nil
        let now = self.now
        for completion in commandFlow.handleTimeouts(now: now) { complete(completion) }
        for handle in Array(links.keys) {
            links[handle]?.bearer.advanceTime(to: now)
            drainBearer(handle: handle)
        }
        if let pending = pendingConnection, pending.deadline <= now { connectionAttemptTimedOut() }
        if let scan = scanSession, let deadline = scan.deadline, deadline <= now { scanDurationElapsed() }
        pumpCommands()
    }
}
