import BluewireCore
import BluewireGATT
import BluewireHCI

// Left out of builds with BLUEWIRE_NO_CENTRAL (the peripheral firmware image); HostEngine+NoCentral stands in.
#if !BLUEWIRE_NO_CENTRAL

// # A scan for a while
//
// `.startScan(..., duration:)` ends by itself: when the duration is over the engine queues Scan
// Enable off behind whatever is queued (so the controller ends up not scanning, as after `.stopScan`)
// and, once the controller answered it, the scan's machine takes ScanCompleted (Docs/Design.md) and
// `.scanStopped` is emitted. The timer is the engine's, like every other: a replay runs it in the
// capture's time and a test advances it by hand. The extended scan commands' own Duration (Core Vol 4
// Part E §7.8.65) is not used: the legacy commands have none, and a controller that ends the scan
// itself reports it with Scan Timeout, which the engine would then have to tell from a stop.

extension ScanState {
    /// The trigger the scan's machine takes when the stop queued for this scan is answered.
    var endTrigger: ConnectionTrigger { completing ? .scanCompleted : .stopScan }
}

extension HostEngine {
    /// When the running scan's duration is over; nil without a duration or once its stop is queued.
    var scanDeadline: MonotonicInstant? {
        guard let scan, !scan.stopping else { return nil }
        return scan.deadline
    }

    /// Queues the stop of a scan whose duration is over (called from `advanceTime`).
    mutating func fireScanDuration() {
        guard let deadline = scanDeadline, deadline <= now else { return }
        scan?.deadline = nil
        scan?.completing = true
        stopScan(nil)
    }
}

#endif  // !BLUEWIRE_NO_CENTRAL
