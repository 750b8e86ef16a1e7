import BluewireCore
import BluewireHCI
import BluewireHostEngine

extension BluetoothHost {
    /// An HCI command (`send(_:timeout:)`): the engine's `.command`, queued
    /// behind the controller procedures already asked for, under the controller's command credits and
    /// `timeout` (the configuration's when nil). A refusal because the engine is not running (closed,
    /// or bringing the controller up again after a Hardware Error) is a cancellation, which `send`
    /// reports with its cause.
    func engineCommand(_ engineHost: EngineHost, _ command: HCICommand, timeout: TimeSpan?) async -> Result<CommandResponse, CommandError> {
        switch await engineHost.perform(.command(command, timeout: timeout)) {
        case .success(.commandResponse(let response)): return .success(response)
        case .failure(.command(let error)): return .failure(error)
        case .success, .failure: return .failure(.cancelled(command.opcode))
        }
    }
}
