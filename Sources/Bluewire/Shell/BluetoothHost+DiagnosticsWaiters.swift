/// A task waiting in `waitForDiagnostics` until its condition holds.
struct DiagnosticsWaiter {
    let condition: @Sendable (HostDiagnostics) -> Bool
    let continuation: CheckedContinuation<Bool, Never>
}

extension BluetoothHost {
    /// Suspends until `condition` holds of the host's counts (`diagnostics`); returns false if the
    /// host closes (or its transport ends) first.
    ///
    /// For tests: what a host does on its own tasks (take a packet, resume advertising after a
    /// link ends, queue a request, drop a subscription nobody holds) is awaited here instead of
    /// polled. The counts change only in a drain of the engine host (every packet, request and timer
    /// ends with one), when a notification route is added or removed, when a sender starts waiting
    /// for an ACL queue, and when a GATT client session is freed; the condition is checked at each
    /// of those, so it is seen as soon as it holds: no polling, no sleep, no guess about when the
    /// host is done.
    @_spi(Testing)
    public func waitForDiagnostics(_ condition: @escaping @Sendable (HostDiagnostics) -> Bool) async -> Bool {
        if condition(diagnostics) { return true }
        guard phase != .closed else { return false }
        return await withCheckedContinuation { continuation in
            diagnosticsWaiters.append(DiagnosticsWaiter(condition: condition, continuation: continuation))
            hasDiagnosticsWaiters.store(true, ordering: .relaxed)
            notificationRoutes.onChange = { [weak self] in
                guard let self else { return }
                Task { await self.resumeDiagnosticsWaiters() }
            }
            wantDrainedTaps()
        }
    }

    /// Resumes the waiters whose condition holds now.
    func resumeDiagnosticsWaiters() {
        guard !diagnosticsWaiters.isEmpty else { return }
        let counts = diagnostics
        var index = 0
        while index < diagnosticsWaiters.count {
            if diagnosticsWaiters[index].condition(counts) {
                diagnosticsWaiters.remove(at: index).continuation.resume(returning: true)
            } else {
                index += 1
            }
        }
        if diagnosticsWaiters.isEmpty {
            notificationRoutes.onChange = nil
            hasDiagnosticsWaiters.store(false, ordering: .relaxed)
        }
        wantDrainedTaps()
    }

    /// The host closed: what still waits gets its answer now (true only if the condition holds).
    func endDiagnosticsWaiters() {
        let waiters = diagnosticsWaiters
        diagnosticsWaiters.removeAll()
        notificationRoutes.onChange = nil
        hasDiagnosticsWaiters.store(false, ordering: .relaxed)
        let counts = diagnostics
        for waiter in waiters { waiter.continuation.resume(returning: waiter.condition(counts)) }
    }

    /// A GATT client session was freed (`HostDiagnostics.liveGATTSessions` dropped): re-checks what
    /// waits in `waitForDiagnostics`, if anyone does. Called from the session's deinit, on whatever
    /// thread released it, hence the hop.
    nonisolated func gattSessionReleased() {
        guard hasDiagnosticsWaiters.load(ordering: .relaxed) else { return }
        Task { await self.resumeDiagnosticsWaiters() }
    }

    /// Asks the engine host for `.drained` at the end of each drain while anyone here needs it.
    func wantDrainedTaps() {
        let wanted = !aclQueueWaiters.isEmpty || !diagnosticsWaiters.isEmpty
        engineHost.onSharedExecutor(passing: wanted) { $0.shellWantsDrained = $1 }
    }
}
