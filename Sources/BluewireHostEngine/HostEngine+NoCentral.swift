import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI

// Builds with BLUEWIRE_NO_CENTRAL (the peripheral firmware image, scripts/firmware.sh) leave the
// central role out: scanning (HostEngine+Scanning), creating connections (HostEngine+Connecting) and
// the GATT client (HostEngine+GATTClient, DiscoverDatabase, HostEngine+EATTClient) are not compiled.
// These stand-ins keep the engine's request switch as it is; the GATT server, advertising and the
// peripheral role are unchanged.
#if BLUEWIRE_NO_CENTRAL

/// Never created: there is no scan without the central role.
struct ScanState: Sendable {
    var stopping = false
}

/// A GATT client operation; none is ever queued.
struct ClientOperation: Sendable {
    var id: HostRequestID
}

extension HostEngine {
    mutating func startScan(_ id: HostRequestID, _ parameters: ScanParameters, _ filter: AdvertisingFilter, duration: TimeSpan?) {
        complete(id, .failure(.notSupported))
    }
    /// No scan, no scan duration.
    var scanDeadline: MonotonicInstant? { nil }
    mutating func fireScanDuration() {}
    /// Nothing scans, so stopping succeeds at once.
    mutating func stopScan(_ id: HostRequestID?) { complete(id, .success(.done)) }
    mutating func scanStopped() {}
    mutating func scanStartFailed(_ error: HostEngineError) {}
    mutating func scanReceived(legacy report: LEAdvertisingReport) {}
    mutating func scanReceived(extended report: LEExtendedAdvertisingReport) {}

    mutating func connect(_ id: HostRequestID, _ peer: BluetoothAddress, _ parameters: LEConnectionParameters, timeout: TimeSpan?) {
        complete(id, .failure(.notSupported))
    }
    /// No attempt is ever in progress, so there is nothing to cancel.
    mutating func cancelConnect(_ id: HostRequestID) { complete(id, .success(.done)) }
    mutating func connectionAttemptTimedOut() {}

    mutating func gattClient(_ id: HostRequestID, _ connection: UInt16, _ operation: GATTClientRequest) {
        complete(id, .failure(.notSupported))
    }
    /// No client operation is ever queued, so there is none to withdraw.
    mutating func cancelGATT(_ id: HostRequestID, _ connection: UInt16, _ request: HostRequestID) {
        complete(id, .success(.done))
    }
    /// No client request is ever sent, so no response is ours.
    mutating func clientResponse(_ id: ATTRequestID, _ result: Result<ATTPDU, ATTBearerError>, handle: UInt16) {}
}

#if !BLUEWIRE_NO_CHANNELS
extension HostEngine {
    mutating func gattOnEATT(_ id: HostRequestID, _ handle: UInt16, _ cid: UInt16, _ operation: GATTClientRequest) {
        complete(id, .failure(.notSupported))
    }
    mutating func gattOnAnyEATTBearer(_ id: HostRequestID, _ handle: UInt16, _ operation: GATTClientRequest) {
        complete(id, .failure(.notSupported))
    }
    mutating func eattClientResponse(
        _ id: ATTRequestID, _ result: Result<ATTPDU, ATTBearerError>, handle: UInt16, cid: UInt16
    ) {}
}
#endif  // !BLUEWIRE_NO_CHANNELS

#endif  // BLUEWIRE_NO_CENTRAL
