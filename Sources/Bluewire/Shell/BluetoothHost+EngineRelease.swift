import BluewireCore
import BluewireHCI
import BluewireHostEngine

extension BluetoothHost {
    /// `release(timeout:)`, in this order: the connection attempt
    /// cancelled (`.cancelConnect`), the scan stopped, advertising stopped (`.stopAdvertising`), each
    /// link disconnected (`.disconnect`, Remote User Terminated Connection), then a wait of at most
    /// `timeout` for their Disconnection Complete events before the host closes.
    func engineRelease(_ engineHost: EngineHost, timeout: TimeSpan) async {
        if phase == .running {
            engineCancelConnect()
            if shell.scan != nil { await engineStopScan() }
            // The peripheral side's stop: the shell forgets the advertisement too.
            if engineIsAdvertising(engineHost) { try? await engineStopAdvertising(engineHost) }
            let handles = shell.links.keys.sorted()
            if !handles.isEmpty {
                for handle in handles {
                    // Done at the link's Disconnection Complete, which the wait below sees.
                    _ = enginePerformNow(engineHost, .disconnect(handle: handle, reason: .remoteUserTerminatedConnection))
                }
                let deadline = now + timeout
                let clock = self.clock
                // Whichever comes first: every Disconnection Complete, or the deadline (then the
                // close below ends what is left).
                let timer = Task { [weak self] in
                    try? await clock.sleep(until: deadline)
                    await self?.endEngineReleaseWait()
                }
                for handle in handles where shell.links[handle] != nil {
                    _ = await engineWaitForDisconnection(handle: handle)
                }
                timer.cancel()
            }
        }
        await engineClose(engineHost)
    }

    /// The release deadline passed: stop waiting for Disconnection Complete.
    func endEngineReleaseWait() {
        for handle in shell.links.keys {
            let waiters = shell.links[handle]?.disconnectWaiters ?? []
            shell.links[handle]?.disconnectWaiters.removeAll()
            for waiter in waiters { waiter.resume(returning: .connectionTerminatedByLocalHost) }
        }
    }

    /// `clearControllerLeftovers()`: the engine's `.clearControllerLeftovers`,
    /// the same three best-effort commands in the same procedure queue.
    func engineClearControllerLeftovers(_ engineHost: EngineHost) async {
        guard phase == .running else { return }
        _ = await engineHost.perform(.clearControllerLeftovers)
    }
}
