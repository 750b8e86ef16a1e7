import BluewireCore
import BluewireGATT
import BluewireHCI

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
        engineScan(engineHost, filter: filter, parameters: parameters, duration: duration, onTransition: onTransition)
    }

    /// The scan path's state: Disconnected.Scanning while a scan runs, Error after a failed scan
    /// (until `resetScan()`), else Disconnected.Initial.
    public var scanState: ConnectionState {
        engineHost.onSharedExecutor { $0.engine.scanState }
    }

    /// Leaves the Error a failed scan left (the design's `Reset`, Error → Disconnected.Initial).
    /// - Throws: `.refused` naming the state and `Reset` when the scan path is not in Error.
    public func resetScan() throws(HostError) {
        try engineResetScan(engineHost)
    }

    /// Stops the running scan (if any); its sequence finishes normally.
    public func stopScan() async {
        await engineStopScan()
    }
}
