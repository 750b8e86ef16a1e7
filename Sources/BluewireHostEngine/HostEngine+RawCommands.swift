import BluewireCore
import BluewireHCI

extension HostEngine {
    /// `.command`: the application's HCI command, handed straight to the command flow. It goes out as
    /// soon as the controller grants a command credit (Num_HCI_Command_Packets, Core Vol 4 Part E
    /// §4.4), beside the engine's own procedures rather than behind them, as `BluetoothHost.send`
    /// does: a command the controller never answers (a vendor opcode bumble ignores) holds up nothing
    /// but itself until its timeout. Order relative to the engine's procedures is therefore not kept;
    /// an application that needs it waits for the procedure's completion first.
    mutating func rawCommand(_ id: HostRequestID, _ command: HCICommand, timeout: TimeSpan?) {
        guard phase == .running else { return complete(id, .failure(.notRunning)) }
        rawCommands.append((command: commandFlow.enqueue(command, timeout: timeout), opcode: command.opcode, request: id))
        sendCommands()
    }

    /// Completes the application's command `completion` answers (its Command Complete or Command
    /// Status, `CommandFlow` having made a non-zero status a failure, or its timeout); false when
    /// the completion is for an engine procedure's command. Not inlined: `commandCompleted` is
    /// inlined into both `handle(_:)` and `advanceTime`, and this once, out of line, keeps the
    /// firmware's flash small.
    @inline(never)
    mutating func rawCommandAnswered(_ completion: CommandCompletion) -> Bool {
        var index = 0
        while index < rawCommands.count, rawCommands[index].command != completion.id { index += 1 }
        guard index < rawCommands.count else { return false }
        let id = rawCommands.remove(at: index).request
        switch completion.result {
        case .success(let response): complete(id, .success(.commandResponse(response)))
        case .failure(let error): complete(id, .failure(.command(error)))
        }
        return true
    }

    /// A Hardware Error cancelled every command: the application's fail with `.cancelled`.
    @inline(never)
    mutating func cancelRawCommands() {
        let cancelled = rawCommands
        rawCommands.removeAll()
        for raw in cancelled { complete(raw.request, .failure(.command(.cancelled(raw.opcode)))) }
    }
}
