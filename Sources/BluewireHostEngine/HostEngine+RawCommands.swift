import BluewireCore
import BluewireHCI

extension HostEngine {
    /// `.command`: the application's HCI command as a one-command procedure, so that it waits for the
    /// engine's earlier procedures and for a command credit (Core Vol 4 Part E §4.4) like every other.
    mutating func rawCommand(_ id: HostRequestID, _ command: HCICommand, timeout: TimeSpan?) {
        guard phase == .running else { return complete(id, .failure(.notRunning)) }
        enqueue(ControllerProcedure(
            id: id, kind: .rawCommand, commands: [ProcedureCommand(command: command, optional: false, timeout: timeout)]))
    }

    /// Its Command Complete or Command Status (`CommandFlow` has made a non-zero status a failure),
    /// or its timeout. Not inlined: `commandCompleted` is inlined into both `handle(_:)` and
    /// `advanceTime`, and this once, out of line, is about 0.6 KB less of the firmware's flash.
    @inline(never)
    mutating func rawCommandAnswered(_ id: HostRequestID?, _ result: Result<CommandResponse, CommandError>) {
        switch result {
        case .success(let response): complete(id, .success(.commandResponse(response)))
        case .failure(let error): complete(id, .failure(.command(error)))
        }
    }
}
