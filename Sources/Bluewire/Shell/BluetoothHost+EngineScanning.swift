import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine

/// The scan a `BluetoothHost` runs: where its devices go and who watches its
/// state machine. The engine aggregates, filters, times and stops the scan itself.
struct ShellScan {
    var id: UInt64
    /// Weak, so that a consumer who dropped the sequence stops the scan.
    weak var registration: ScanRegistration?
    var onTransition: (@Sendable (ConnectionTransition) -> Void)?
}

extension BluetoothHost {
    /// `scan(filter:parameters:duration:onTransition:)`. The engine's
    /// `.startScan` fires StartScan at once (refused in Error until `resetScan()`); the sequence
    /// ends when the scan's machine leaves Scanning, throwing the cause of a Failure.
    func engineScan(
        _ engineHost: EngineHost, filter: AdvertisingFilter, parameters: ScanParameters, duration: TimeSpan?,
        onTransition: (@Sendable (ConnectionTransition) -> Void)?
    ) -> ScanResults {
        guard phase == .running else { return ScanResults(registration: .failed(.notRunning)) }
        guard shell.scan == nil else { return ScanResults(registration: .failed(.scanAlreadyRunning)) }
        let id = nextObserverID
        nextObserverID += 1
        let registration = ScanRegistration { [weak self] in
            guard let self else { return }
            Task { await self.engineStopScan(id: id) }
        }
        // Before the request, so the StartScan it fires reaches `onTransition`.
        shell.scan = ShellScan(id: id, registration: registration, onTransition: onTransition)
        let started = enginePerformNow(engineHost, .startScan(parameters, filter: filter, duration: duration))
        if case .failure(let error)? = started {
            shell.scan = nil
            return ScanResults(registration: .failed(engineHostError(error)))
        }
        return ScanResults(registration: registration)
    }

    /// `stopScan()`: the sequence ends now; the engine queues Scan Enable off
    /// and fires StopScan when the controller answers it.
    func engineStopScan(id: UInt64? = nil) async {
        guard let scan = shell.scan, id == nil || scan.id == id else { return }
        finishShellScan(error: nil, keepingObserver: true)
        _ = await engineHost.perform(.stopScan)
    }

    func engineResetScan(_ engineHost: EngineHost) throws(HostError) {
        if case .failure(let error)? = enginePerformNow(engineHost, .resetScan) {
            throw engineHostError(error)
        }
    }

    // MARK: from the engine's events

    func engineDeviceFound(_ device: DiscoveredDevice) {
        guard let scan = shell.scan else { return }
        scan.registration?.queue.yield(device)
        // The engine does not report the scan machine's DeviceFound self-transition;
        // `onTransition` is given it here.
        if let onTransition = scan.onTransition {
            var machine = ConnectionStateMachine(state: .disconnected(.scanning))
            if let transition = try? machine.fire(.deviceFound) { onTransition(transition) }
        }
    }

    func engineScanTransition(_ transition: ConnectionTransition, cause: HostEngineError?) {
        let observer = shell.scan?.onTransition ?? shell.endedScanObserver
        observer?(transition)
        guard transition.to != .disconnected(.scanning) else { return }
        shell.endedScanObserver = nil
        finishShellScan(error: cause.map(engineHostError), keepingObserver: false)
    }

    /// Ends the consumer's sequence, throwing `error` if there is one. The scan's observer keeps
    /// getting transitions until the machine leaves Scanning when the host stopped the scan itself.
    func finishShellScan(error: HostError?, keepingObserver: Bool) {
        guard let scan = shell.scan else { return }
        shell.scan = nil
        if keepingObserver { shell.endedScanObserver = scan.onTransition }
        if let error {
            scan.registration?.queue.finish(throwing: error)
        } else {
            scan.registration?.queue.finish()
        }
    }

    /// The host error for an engine failure, the transport's own error for `.transportEnded`.
    func engineHostError(_ error: HostEngineError) -> HostError {
        if case .transportEnded = error {
            return .transport(engineHost.onSharedExecutor { $0.transportFailure } ?? .closed)
        }
        return HostError(engine: error)
    }
}
