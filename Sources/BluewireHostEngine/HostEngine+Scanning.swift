import BluewireCore
import BluewireGATT
import BluewireHCI

// Left out of builds with BLUEWIRE_NO_CENTRAL (the peripheral firmware image); HostEngine+NoCentral stands in.
#if !BLUEWIRE_NO_CENTRAL

/// A scan in progress.
struct ScanState: Sendable {
    var aggregator: AdvertisingAggregator
    var extendedChains = ExtendedAdvertisingReassembler()
    var stateMachine: ConnectionStateMachine
    /// A stop has been queued; reports still arriving are still delivered until it is answered.
    var stopping = false

    /// Fires a scan-path trigger. The scan's machine lives only while the scan does: made in
    /// Disconnected.Initial for StartScan, it is in Scanning for every later trigger (StopScan ends
    /// it, DeviceFound is Scanning's self-transition), so a refusal cannot happen; should one all
    /// the same, it stops debug builds rather than being dropped.
    mutating func fire(_ trigger: ConnectionTrigger) {
        do throws(ConnectionTriggerRefused) {
            try stateMachine.fire(trigger)
        } catch {
            assertionFailure("scan state machine out of step")
        }
    }
}

extension HostEngine {
    /// LE Set (Extended) Scan Parameters, then Enable (§7.8.10-11, §7.8.64-65).
    mutating func startScan(_ id: HostRequestID, _ parameters: ScanParameters, _ filter: AdvertisingFilter) {
        guard phase == .running, let controller else { return complete(id, .failure(.notRunning)) }
        guard scan == nil || scan?.stopping == true else { return complete(id, .failure(.scanAlreadyRunning)) }
        scan = ScanState(aggregator: AdvertisingAggregator(filter: filter), stateMachine: ConnectionStateMachine())
        scan?.fire(.startScan)
        enqueue(id, .startScan, ScanCommands.start(parameters, on: controller))
    }

    /// Scan Enable off, queued behind the start so the controller ends up not scanning.
    mutating func stopScan(_ id: HostRequestID?) {
        guard let controller, scan != nil, scan?.stopping == false else { return complete(id, .success(.done)) }
        scan?.stopping = true
        enqueue(id, .stopScan, [ScanCommands.stop(on: controller)], optional: true)
    }

    mutating func scanStopped(force: Bool = false) {
        // A scan started after the stop was queued goes on.
        guard var state = scan, state.stopping || force else { return }
        state.fire(.stopScan)
        scan = nil
        emit(.scanStopped)
    }

    mutating func scanStartFailed() {
        // Only the scan this start created ends; a stop already queued finds nothing to report.
        guard scan?.stopping == false else { return }
        scan = nil
    }

    mutating func scanReceived(legacy report: LEAdvertisingReport) {
        guard var state = scan else { return }
        scan = nil  // keeps the aggregator's storage uniquely referenced: no copy per report
        if var device = state.aggregator.add(report, now: now) {
            state.fire(.deviceFound)
            if device.address.randomKind == .resolvablePrivate { device.identityAddress = resolveIdentity(device.address) }
            emit(.deviceFound(device))
        }
        scan = state
    }

    mutating func scanReceived(extended report: LEExtendedAdvertisingReport) {
        guard var state = scan else { return }
        scan = nil
        if let whole = state.extendedChains.add(report), var device = state.aggregator.add(whole.report, now: now) {
            state.fire(.deviceFound)
            if device.address.randomKind == .resolvablePrivate { device.identityAddress = resolveIdentity(device.address) }
            emit(.deviceFound(device))
        }
        scan = state
    }
}

#endif  // !BLUEWIRE_NO_CENTRAL
