import BluewireCore
import BluewireGATT
import BluewireHCI

// Left out of builds with BLUEWIRE_NO_CENTRAL (the peripheral firmware image); HostEngine+NoCentral stands in.
#if !BLUEWIRE_NO_CENTRAL

/// A scan in progress (its state machine is the engine's `scanMachine`, HostEngine+ScanMachine).
struct ScanState: Sendable {
    var aggregator: AdvertisingAggregator
    var extendedChains = ExtendedAdvertisingReassembler()
    /// A stop has been queued; reports still arriving are still delivered until it is answered.
    var stopping = false
    /// When the scan's duration is over (HostEngine+ScanDuration); nil: until `.stopScan`.
    var deadline: MonotonicInstant?
    /// The stop queued is the duration's: the machine takes ScanCompleted when it is answered.
    var completing = false
}

extension HostEngine {
    /// LE Set (Extended) Scan Parameters, then Enable (§7.8.10-11, §7.8.64-65).
    mutating func startScan(_ id: HostRequestID, _ parameters: ScanParameters, _ filter: AdvertisingFilter, duration: TimeSpan?) {
        guard phase == .running, let controller else { return complete(id, .failure(.notRunning)) }
        guard scan == nil || scan?.stopping == true else { return complete(id, .failure(.scanAlreadyRunning)) }
        // A stop queued ahead of this start ends the previous scan before this one begins: the
        // machine goes through Initial (StopScan is accepted: that scan kept it in Scanning).
        if let previous = scan, previous.stopping { fireScanExpected(previous.endTrigger) }
        do throws(HostEngineError) {
            try fireScan(.startScan)
        } catch {
            // In Error after a failed scan, until `.resetScan`.
            return complete(id, .failure(error))
        }
        scan = ScanState(aggregator: AdvertisingAggregator(filter: filter), deadline: duration.map { now + $0 })
        enqueue(id, .startScan, ScanCommands.start(parameters, on: controller))
    }

    /// Scan Enable off, queued behind the start so the controller ends up not scanning.
    mutating func stopScan(_ id: HostRequestID?) {
        guard let controller, scan != nil, scan?.stopping == false else { return complete(id, .success(.done)) }
        scan?.stopping = true
        enqueue(id, .stopScan, [ScanCommands.stop(on: controller)], optional: true)
    }

    mutating func scanStopped() {
        // A scan started after the stop was queued goes on (its start fired this stop already).
        guard let stopped = scan, stopped.stopping else { return }
        scan = nil
        // Accepted: the machine is in Scanning while a scan exists.
        fireScanExpected(stopped.endTrigger)
        emit(.scanStopped)
    }

    /// The controller refused a command of the scan's start: the scan's machine goes to Error with the
    /// reason. A stop already queued behind it ends the scan as asked instead (nothing to report).
    mutating func scanStartFailed(_ error: HostEngineError) {
        guard scan?.stopping == false else { return }
        scan = nil
        // Accepted: the machine is in Scanning while a scan exists.
        fireScanExpected(.failure, cause: error)
    }

    mutating func scanReceived(legacy report: LEAdvertisingReport) {
        guard var state = scan else { return }
        scan = nil  // keeps the aggregator's storage uniquely referenced: no copy per report
        if var device = state.aggregator.add(report, now: now) {
            // Accepted: Scanning's self-transition, and a scan exists only in Scanning.
            fireScanExpected(.deviceFound)
            device.identityAddress = identity(ofAdvertiser: device.address)
            peerFound(device)
            emit(.deviceFound(device))
        }
        scan = state
    }

    mutating func scanReceived(extended report: LEExtendedAdvertisingReport) {
        guard var state = scan else { return }
        scan = nil
        if let whole = state.extendedChains.add(report), var device = state.aggregator.add(whole.report, now: now) {
            // Accepted: Scanning's self-transition, and a scan exists only in Scanning.
            fireScanExpected(.deviceFound)
            device.identityAddress = identity(ofAdvertiser: device.address)
            peerFound(device)
            emit(.deviceFound(device))
        }
        scan = state
    }

    /// The identity of an advertiser: the one its controller resolved (address type 0x02/0x03), else the
    /// one a bond's IRK resolves its private address to in the host.
    mutating func identity(ofAdvertiser address: BluetoothAddress) -> BluetoothAddress? {
        if let identity = controllerResolvedIdentity(address) { return identity }
        return address.randomKind == .resolvablePrivate ? resolveIdentity(address) : nil
    }
}

#endif  // !BLUEWIRE_NO_CENTRAL
