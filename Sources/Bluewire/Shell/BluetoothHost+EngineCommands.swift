import BluewireCore
import BluewireHCI
import BluewireHostEngine

extension BluetoothHost {
    /// An HCI command on the engine backend. Not moved yet: it is cancelled at once rather than
    /// queued on the legacy command flow, which no transport drains on this backend.
    func engineCommand(_ engineHost: EngineHost, _ command: HCICommand, timeout: TimeSpan?) async -> Result<CommandResponse, CommandError> {
        .failure(.cancelled(command.opcode))
    }
}
