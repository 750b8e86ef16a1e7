import BluewireCore
import BluewireHCI
import BluewireHostEngine

extension HostEngineConfiguration {
    /// The engine's configuration for a `BluetoothHost` one: the same timeouts, MTU and clearing of
    /// leftovers at start, and the random static address chosen now when the host's names none (the
    /// engine needs it from the beginning).
    init(host: HostConfiguration) {
        self.init(
            randomAddress: host.randomAddress ?? BluetoothAddress.randomStatic(UInt64.random(in: 0...0x3FFF_FFFF_FFFF)),
            commandTimeout: host.commandTimeout,
            connectionTimeout: host.connectionTimeout,
            preferredMTU: host.preferredMTU)
        clearsControllerLeftoversAtStart = host.clearsControllerLeftoversAtStart
    }
}

extension BluetoothHost {
    /// `start()`: the engine's bring-up (`ControllerBringUp`), with the engine host's events routed
    /// to this host first.
    func engineStart(_ engineHost: EngineHost) async throws(HostError) -> ControllerInfo {
        if phase == .closed { throw .notRunning }
        installShellTap(engineHost)
        phase = .starting
        switch await engineHost.perform(.start) {
        case .success(.started(let info)):
            controller = info
            phase = .running
            return info
        case .success:
            phase = .idle
            throw .notRunning
        case .failure(.alreadyStarted):
            if let controller { return controller }
            throw .notRunning
        case .failure(let error):
            log.hci.error("bring-up failed: \(error)")
            if let failure = await engineHost.transportFailure {
                phase = .closed
                throw .transport(failure)
            }
            phase = .idle
            throw HostError(engine: error)
        }
    }

    /// `close()`: the engine host fails what waits and closes the transport;
    /// its `.finished` ends this host's event streams.
    func engineClose(_ engineHost: EngineHost) async {
        guard phase != .closed else { return }
        phase = .closed
        commandCancellationCause = .notRunning
        await engineHost.close()
        finishShellObservers()
    }

    func installShellTap(_ engineHost: EngineHost) {
        guard !shell.tapInstalled else { return }
        shell.tapInstalled = true
        let tap: @Sendable (EngineShellTap) -> Void = { [weak self] tap in
            // Called from the engine host's drain, on the executor the two share.
            self?.onSharedExecutor(passing: tap) { $0.shellTapped($1) }
        }
        engineHost.onSharedExecutor(passing: tap) { $0.shellTap = $1 }
        installNotificationRoute(engineHost)
    }

    func shellTapped(_ tap: EngineShellTap) {
        switch tap {
        case .event(let event): engineEvent(event)
        case .drained:
            engineResumeACLQueueWaiters()
            resumeDiagnosticsWaiters()
        case .finished:
            let failure = engineHost.onSharedExecutor { $0.transportFailure }
            commandCancellationCause = failure.map { .transport($0) } ?? .notRunning
            if phase != .closed {
                phase = .closed
                log.transport.notice("transport ended")
            }
            finishShellObservers()
        }
    }

    /// The host closed (or its transport ended) with links up: no Disconnection Complete will come, so
    /// the engine ends each link itself (`closeLinks`), and this host reports what it emits (Disconnect
    /// on the peer's machine, `.disconnected`) as when a link ends. What the engine
    /// would send in answer goes nowhere: its transport is closed.
    func engineEndLinks() {
        guard !shell.links.isEmpty else { return }
        let events: [HostEngineEvent] = engineHost.assumeIsolated { host in
            host.engine.closeLinks(reason: .connectionTerminatedByLocalHost)
            var events: [HostEngineEvent] = []
            while let output = host.engine.nextOutput() {
                if case .event(let event) = output { events.append(event) }
            }
            return events
        }
        for event in events { engineEvent(event) }
    }

    func finishShellObservers() {
        engineEndLinks()
        // A scan still running ends with the transport's error, or
        // `.notRunning` when the application closed the host.
        finishShellScan(error: commandCancellationCause ?? .notRunning, keepingObserver: false)
        shell.endedScanObserver = nil
        // Links end with the host: what waits for their end gets
        // Connection Terminated By Local Host.
        for handle in shell.links.keys.sorted() { _ = engineLinkDown(handle: handle, reason: .connectionTerminatedByLocalHost) }
        for observer in eventObservers.values { observer.finish() }
        eventObservers.removeAll()
        engineResumeACLQueueWaiters()
        for observers in shell.peerObservers.values { for observer in observers.values { observer.finish() } }
        shell.peerObservers.removeAll()
        shell.advertising = nil
        finishPeripheral()
        endDiagnosticsWaiters()
    }
}
