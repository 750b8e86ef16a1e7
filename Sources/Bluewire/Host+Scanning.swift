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
    /// ScanCompleted, and to Error on Failure when a scan command fails, the controller reports a
    /// Hardware Error or the transport ends); it is called on the host's executor, so it must not
    /// block. A failed scan is not a stop: the machine stays in Error, and the next `scan` fails with
    /// `.refused` until `resetScan()`, so the application sees the failure before it scans again.
    ///
    /// Every peer the host knows (`state(of:)`) that is in Disconnected.Initial scans along: StartScan
    /// now, DeviceFound when its advertising arrives, and the scan's end (or Failure) when it ends; a
    /// `connect(to:)` while the scan runs takes that peer from Scanning to Connecting.
    public func scan(
        filter: AdvertisingFilter = AdvertisingFilter(),
        parameters: ScanParameters = ScanParameters(),
        duration: TimeSpan? = nil,
        onTransition: (@Sendable (ConnectionTransition) -> Void)? = nil
    ) -> ScanResults {
        if let engineHost {
            return engineScan(engineHost, filter: filter, parameters: parameters, duration: duration, onTransition: onTransition)
        }
        guard phase == .running, let controller else { return ScanResults(registration: .failed(.notRunning)) }
        guard scanSession == nil else { return ScanResults(registration: .failed(.scanAlreadyRunning)) }
        // Refused in Error: a failed scan is left only by `resetScan()`.
        scanMachine.observer = onTransition
        do throws(ConnectionTriggerRefused) {
            try scanMachine.fire(.startScan)
        } catch {
            scanMachine.observer = nil
            return ScanResults(registration: .failed(.refused(error)))
        }
        fire(.startScan, onPeersIn: .initial)
        let id = nextObserverID
        nextObserverID += 1
        let registration = ScanRegistration { [weak self] in
            guard let self else { return }
            Task { await self.stopScan(id: id) }
        }
        scanSession = ScanSession(
            id: id, aggregator: AdvertisingAggregator(filter: filter), registration: registration,
            deadline: duration.map { now + $0 })
        // Queued now, behind any stop already asked for and ahead of any asked for later.
        let commands = ScanCommands.start(parameters, on: controller)
        enqueueProcedure { host in
            for command in commands {
                // Stopped before the controller started: the stop queued behind says the rest.
                guard host.scanSession?.id == id else { return }
                if case .failure(let error) = await host.sendCommandResult(command) {
                    host.endScan(id: id, error: .command(error), trigger: .failure)
                    return
                }
            }
        }
        rescheduleTimer()
        return ScanResults(registration: registration)
    }

    /// The scan path's state: Disconnected.Scanning while a scan runs, Error after a failed scan
    /// (until `resetScan()`), else Disconnected.Initial.
    public var scanState: ConnectionState {
        if let engineHost { return engineHost.assumeIsolated { $0.engine.scanState } }
        return scanMachine.state
    }

    /// Leaves the Error a failed scan left (the design's `Reset`, Error → Disconnected.Initial).
    /// - Throws: `.refused` naming the state and `Reset` when the scan path is not in Error.
    public func resetScan() throws(HostError) {
        if let engineHost { return try engineResetScan(engineHost) }
        do throws(ConnectionTriggerRefused) {
            try scanMachine.fire(.reset)
        } catch {
            throw .refused(error)
        }
    }

    /// Stops the running scan (if any); its sequence finishes normally.
    public func stopScan() async {
        if engineHost != nil { return await engineStopScan() }
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
        scanSession?.deadline = nil
        rescheduleTimer()
        let stop = ScanCommands.stop(on: controller)
        enqueueProcedure { host in
            _ = await host.sendCommandResult(stop)
            host.endScan(id: id, error: nil, trigger: .scanCompleted)
        }
    }

    /// Ends the running scan: with `.stopScan` when the host stops it (the consumer's sequence then
    /// throws `error` if there is one, as when the host closes), or with `.failure` when it failed.
    func endScan(error: HostError?, trigger: ConnectionTrigger) {
        guard let session = scanSession else { return }
        endScan(id: session.id, error: error, trigger: trigger)
    }

    func endScan(id: UInt64, error: HostError?, trigger: ConnectionTrigger) {
        guard let session = scanSession, session.id == id else { return }
        scanSession = nil
        let cause = error.map { ConnectionFailureCause.host($0) }
        fire(trigger, onPeersIn: .disconnected(.scanning), cause: trigger == .failure ? cause : nil)
        fireScan(trigger)
        scanMachine.observer = nil
        if let error {
            session.registration?.queue.finish(throwing: error)
        } else {
            session.registration?.queue.finish()
        }
        rescheduleTimer()
    }

    /// Fires `trigger` on the scan's machine. Cannot be refused: the machine is in Scanning exactly
    /// while a scan session exists, and the callers fire only StopScan, ScanCompleted, DeviceFound and
    /// Failure with a session, all accepted in Scanning. A refusal would be a bug: logged, not hidden.
    func fireScan(_ trigger: ConnectionTrigger) {
        do throws(ConnectionTriggerRefused) {
            try scanMachine.fire(trigger)
        } catch {
            log.hci.error("scan state machine out of step: \(error)")
        }
    }

    func found(_ device: DiscoveredDevice) {
        fireScan(.deviceFound)
        if let record = peers[device.address], record.state == .disconnected(.scanning) {
            // Cannot be refused: Scanning accepts DeviceFound.
            fireExpected(.deviceFound, on: record)
        }
    }

    func scanReceived(legacy report: LEAdvertisingReport) {
        updateScan { session, now in
            guard let device = session.aggregator.add(report, now: now) else { return nil }
            session.registration?.queue.yield(device)
            return device
        }.map(found)
    }

    func scanReceived(extended report: LEExtendedAdvertisingReport) {
        updateScan { session, now in
            guard let whole = session.extendedChains.add(report),
                  let device = session.aggregator.add(whole.report, now: now) else { return nil }
            session.registration?.queue.yield(device)
            return device
        }.map(found)
    }

    /// Mutates the scan session in place (taken out first, so its tables are not copied on write).
    @discardableResult
    func updateScan<R>(_ body: (inout ScanSession, MonotonicInstant) -> R?) -> R? {
        guard var session = scanSession else { return nil }
        scanSession = nil
        let result = body(&session, now)
        scanSession = session
        return result
    }
}
