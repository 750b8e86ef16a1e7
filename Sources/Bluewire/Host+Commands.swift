import BluewireCore
import BluewireHCI

extension BluetoothHost {
    /// Sends an HCI command and waits for its Command Complete or Command Status.
    ///
    /// Commands wait for the controller's command credits (Num_HCI_Command_Packets); each has a
    /// timeout (the configuration's, 2 s by default) because some controllers answer unknown commands
    /// with nothing at all. A non-zero status fails with the status's name.
    public func send(_ command: HCICommand, timeout: TimeSpan? = nil) async throws(HostError) -> CommandResponse {
        guard phase == .starting || phase == .running else { throw .notRunning }
        switch await engineCommand(engineHost, command, timeout: timeout) {
        case .success(let response): return response
        case .failure(let error):
            // Cancelled with everything else pending: say why (hardware error, transport gone).
            if case .cancelled = error, let cause = commandCancellationCause { throw cause }
            throw .command(error)
        }
    }
}
