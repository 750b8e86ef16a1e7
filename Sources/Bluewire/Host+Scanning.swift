import BluewireCore
import BluewireGATT
import BluewireHCI

/// A running scan: the aggregation of reports into devices and the consumer's stream.
struct ScanSession {
    var id: UInt64
    var aggregator: AdvertisingAggregator
    var extendedChains = ExtendedAdvertisingReassembler()
    /// Where found devices go; weak, so that a consumer who dropped the sequence stops the scan.
    weak var registration: ScanRegistration?
    var deadline: MonotonicInstant?
    var stateMachine: ConnectionStateMachine
}

extension BluetoothHost {
    /// Scans for advertisers and yields each device when first seen and whenever its advertising
    /// data changes (advertising data and scan response merged per device, duplicates collapsed with
    /// the RSSI updated), filtered by service UUID, name prefix and address.
    ///
    /// Uses extended scanning when the controller supports it, legacy otherwise. The scan stops when
    /// `duration` elapses (the sequence then finishes), when the consumer stops iterating, or on
    /// `stopScan()`. One scan at a time: a second concurrent scan finishes with
    /// `HostError.scanAlreadyRunning`.
    ///
    /// `onTransition` observes the scan's state machine (Docs/Design.md: Disconnected.Initial →
    /// Disconnected.Scanning on StartScan, DeviceFound while scanning, back to Initial on StopScan or
    /// ScanCompleted); it is called on the host's executor, so it must not block.
    public func scan(
        filter: AdvertisingFilter = AdvertisingFilter(),
        parameters: ScanParameters = ScanParameters(),
        duration: TimeSpan? = nil,
        onTransition: (@Sendable (ConnectionTransition) -> Void)? = nil
    ) -> ScanResults {
        guard phase == .running, let controller else { return ScanResults(registration: .failed(.notRunning)) }
        guard scanSession == nil else { return ScanResults(registration: .failed(.scanAlreadyRunning)) }
        var machine = ConnectionStateMachine(observer: onTransition)
        do throws(ConnectionTriggerRefused) {
            try machine.fire(.startScan)
        } catch {
            return ScanResults(registration: .failed(.refused(error)))
        }
        let id = nextObserverID
        nextObserverID += 1
        let registration = ScanRegistration { [weak self] in
            guard let self else { return }
            Task { await self.stopScan(id: id) }
        }
        scanSession = ScanSession(
            id: id, aggregator: AdvertisingAggregator(filter: filter), registration: registration,
            deadline: duration.map { now + $0 }, stateMachine: machine)
        // Queued now, behind any stop already asked for and ahead of any asked for later.
        let commands = ScanCommands.start(parameters, on: controller)
        enqueueProcedure { host in
            for command in commands {
                // Stopped before the controller started: the stop queued behind says the rest.
                guard host.scanSession?.id == id else { return }
                if case .failure(let error) = await host.sendCommandResult(command) {
                    host.endScan(id: id, error: .command(error))
                    return
                }
            }
        }
        rescheduleTimer()
        return ScanResults(registration: registration)
    }

    /// The scan path's state: Disconnected.Scanning while a scan runs, else Disconnected.Initial.
    public var scanState: ConnectionState { scanSession?.stateMachine.state ?? .initial }

    /// Stops the running scan (if any); its sequence finishes normally.
    public func stopScan() async {
        guard let session = scanSession else { return }
        await stopScan(id: session.id)
    }

    func stopScan(id: UInt64) async {
        guard let session = scanSession, session.id == id, let controller else { return }
        endScan(id: id, error: nil, trigger: .stopScan)
        let stop = ScanCommands.stop(on: controller)
        _ = await runProcedure { host in await host.sendCommandResult(stop) }
    }

    /// The duration is over: the sequence finishes once the controller has confirmed that scanning
    /// stopped, so a consumer that closes the host next does not cut the disable command off.
    func scanDurationElapsed() {
        guard let session = scanSession, let controller else { return }
        let id = session.id
        updateScan { session, _ in session.deadline = nil }
        rescheduleTimer()
        let stop = ScanCommands.stop(on: controller)
        enqueueProcedure { host in
            _ = await host.sendCommandResult(stop)
            host.endScan(id: id, error: nil, trigger: .scanCompleted)
        }
    }

    func endScan(error: HostError?) {
        guard let session = scanSession else { return }
        endScan(id: session.id, error: error, trigger: .stopScan)
    }

    func endScan(id: UInt64, error: HostError?, trigger: ConnectionTrigger = .stopScan) {
        guard var session = scanSession, session.id == id else { return }
        scanSession = nil
        _ = try? session.stateMachine.fire(trigger)
        if let error {
            session.registration?.queue.finish(throwing: error)
        } else {
            session.registration?.queue.finish()
        }
        rescheduleTimer()
    }

    func scanReceived(legacy report: LEAdvertisingReport) {
        updateScan { session, now in
            guard let device = session.aggregator.add(report, now: now) else { return }
            _ = try? session.stateMachine.fire(.deviceFound)
            session.registration?.queue.yield(device)
        }
    }

    func scanReceived(extended report: LEExtendedAdvertisingReport) {
        updateScan { session, now in
            guard let whole = session.extendedChains.add(report),
                  let device = session.aggregator.add(whole.report, now: now) else { return }
            _ = try? session.stateMachine.fire(.deviceFound)
            session.registration?.queue.yield(device)
        }
    }

    /// Mutates the scan session in place (taken out first, so its tables are not copied on write).
    func updateScan(_ body: (inout ScanSession, MonotonicInstant) -> Void) {
        guard var session = scanSession else { return }
        scanSession = nil
        body(&session, now)
        scanSession = session
    }
}
