import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI

/// One `bluewire scan` on the engine host: starts the scan, shows each device the engine reports
/// (`.deviceFound`: advertising data and scan response merged per device, duplicates collapsed, the
/// filter applied, a bonded peer's private address named, all in the engine) and ends when the
/// engine says the scan stopped: its duration is over (the engine's timer, so a replay runs it in
/// the capture's time), a signal asked for the stop, or the controller failed.
final class ScanRun {
    let host: EngineHost
    let output: ScanOutput
    /// The devices shown, for the closing line.
    private(set) var seen = Set<BluetoothAddress>()
    var devices: Int { seen.count }

    init(host: EngineHost, output: ScanOutput) {
        self.host = host
        self.output = output
    }

    /// Scans until the scan stops; nil when it stopped as asked (duration, signal), else why it failed,
    /// in the words `bluewire scan` has always used. Every element of `stops` (a signal) stops the scan.
    func scan(_ parameters: ScanParameters, filter: AdvertisingFilter, duration: TimeSpan?, stops: AsyncStream<Void>) async -> String? {
        let events = await host.events()
        if case .failure(let error) = await host.perform(.startScan(parameters, filter: filter, duration: duration)) {
            return await describe(error)
        }
        let host = self.host
        return await withTaskGroup(of: Void.self) { group in
            // Started once the scan has: a signal that came during bring-up stops it at once. The stop
            // is queued behind whatever the engine has queued, so the controller ends up not scanning.
            group.addTask {
                for await _ in stops { _ = await host.perform(.stopScan) }
            }
            let failure = await show(events)
            group.cancelAll()
            return failure
        }
    }

    /// Shows devices until `.scanStopped`; a Failure on the scan's machine before it is the answer.
    private func show(_ events: AsyncStream<HostEngineEvent>) async -> String? {
        var failure: HostEngineError?
        for await event in events {
            switch event {
            case .deviceFound(let device):
                seen.insert(device.address)
                output.show(device)
            case .scanStateChanged(let transition, let cause) where transition.to == .error:
                failure = cause ?? .notRunning
            case .scanStopped:
                guard let failure else { return nil }
                return await describe(failure)
            default:
                break
            }
        }
        // The events end only when the host does: the transport ended under the scan.
        return await describe(failure ?? .transportEnded)
    }

    /// What ended the scan, as `bluewire scan` said it before it ran on the engine (`HostError`'s words).
    func describe(_ error: HostEngineError) async -> String {
        if let failure = await host.transportFailure {
            // A replay's mismatch names the record and both packets.
            return "transport error: \(failure)"
        }
        switch error {
        case .command(let command): return "HCI command error: \(command)"
        case .hardwareError(let code): return "controller hardware error 0x\(hex(code, width: 2)); the controller was reset"
        case .notRunning, .transportEnded: return "the host is not running"
        case .scanAlreadyRunning: return "a scan is already running"
        case .refused(let state, let trigger): return "\(ConnectionTriggerRefused(state: state, trigger: trigger))"
        default: return "\(error)"
        }
    }
}
