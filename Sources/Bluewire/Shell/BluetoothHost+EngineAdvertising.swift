import BluewireCore
import BluewireHCI
import BluewireHostEngine

/// The advertisement the application started, and its plan: what
/// `advertisingPlan` reports, and what the host sets up again after a Hardware Error.
struct ShellAdvertising {
    var advertisement: Advertisement
    var plan: AdvertisingPlan
}

extension BluetoothHost {
    /// `startAdvertising`. The plan is made first, so
    /// an advertisement that does not fit fails with the same `PeripheralError` before anything is
    /// sent; the engine's `.startAdvertising` then makes the same choices (AdvertisingCommands) and
    /// runs its commands behind the controller procedures already asked for. The engine restarts
    /// advertising after connections and disconnections itself.
    func engineStartAdvertising(_ engineHost: EngineHost, _ advertisement: Advertisement) async throws(PeripheralError) -> AdvertisingPlan {
        guard phase == .running, let controller else { throw .host(.notRunning) }
        let plan = try AdvertisingPlan(advertisement, controller: controller)
        shell.advertising = ShellAdvertising(advertisement: advertisement, plan: plan)
        switch await engineHost.perform(.startAdvertising(HostAdvertisement(advertisement))) {
        case .success:
            log.hci.debug("advertising", metadata: ["kind": "\(plan.kind)", "connectable": "\(plan.isConnectable)"])
            return plan
        case .failure(let error):
            throw enginePeripheralError(error, advertisement: advertisement)
        }
    }

    /// `stopAdvertising`: not resumed after connections or disconnections, nor
    /// after a Hardware Error, until the next `startAdvertising`.
    func engineStopAdvertising(_ engineHost: EngineHost) async throws(PeripheralError) {
        guard phase == .running else { throw .host(.notRunning) }
        shell.advertising = nil
        if case .failure(let error) = await engineHost.perform(.stopAdvertising) {
            throw enginePeripheralError(error, advertisement: nil)
        }
    }

    func engineIsAdvertising(_ engineHost: EngineHost) -> Bool {
        phase != .closed && engineHost.onSharedExecutor { $0.engine.isAdvertising }
    }

    /// The plan of the advertisement the engine holds (paused by a connection or not).
    func engineAdvertisingPlan(_ engineHost: EngineHost) -> AdvertisingPlan? {
        guard phase != .closed, engineHost.onSharedExecutor({ $0.engine.advertisingLayout != nil }) else { return nil }
        return shell.advertising?.plan
    }

    /// After a Hardware Error brought the controller up again: the Reset wiped the advertising set,
    /// so the advertisement the application still wants is set up again (before the error is reported).
    func engineRestartAdvertising(_ engineHost: EngineHost) async {
        guard let advertisement = shell.advertising?.advertisement else { return }
        do throws(PeripheralError) {
            _ = try await engineStartAdvertising(engineHost, advertisement)
        } catch {
            log.hci.error("advertising not restarted after a hardware error: \(error)")
        }
    }

    /// The peripheral error for an engine failure of an advertising or server request.
    func enginePeripheralError(_ error: HostEngineError, advertisement: Advertisement?) -> PeripheralError {
        switch error {
        case .advertisingData(let data):
            // The plan, made first, names the part that does not fit; the engine decides the same.
            return .advertisingData(data, scanResponse: false)
        case .invalidAdvertisingInterval:
            return .invalidAdvertisingInterval(min: advertisement?.intervalMin ?? 0, max: advertisement?.intervalMax ?? 0)
        case .scanResponseNotAllowed:
            return .scanResponseNotAllowed
        case .server(let server):
            return .server(server)
        default:
            return .host(engineHostError(error))
        }
    }
}

extension HostAdvertisement {
    /// The engine's form of an `Advertisement`: the same fields.
    init(_ advertisement: Advertisement) {
        let commandSet: CommandSet = switch advertisement.commandSet {
        case .automatic: .automatic
        case .legacy: .legacy
        case .extended: .extended
        }
        self.init(
            data: advertisement.data, scanResponse: advertisement.scanResponse, isConnectable: advertisement.isConnectable,
            intervalMin: advertisement.intervalMin, intervalMax: advertisement.intervalMax, commandSet: commandSet,
            advertisesWhileConnected: advertisement.advertisesWhileConnected,
            maximumConnections: advertisement.maximumConnections, prefersLegacyPDUs: advertisement.prefersLegacyPDUs)
    }
}

extension AdvertisingPlan.Kind {
    init(_ kind: HostAdvertisingLayout.Kind) {
        switch kind {
        case .legacy: self = .legacy
        case .extended(let legacyPDUs): self = .extended(legacyPDUs: legacyPDUs)
        }
    }
}
