import BluewireCore
import BluewireHCI
import BluewireHostEngine

extension HostError {
    /// The host-level error for an engine failure of a host-level request (bring-up, a command, a
    /// scan, a connection). `peer` names the address of a connection request: the engine's
    /// connection errors do not repeat it.
    ///
    /// The engine's ATT, GATT, server, channel, security and advertising errors answer requests the
    /// shell maps to `ConnectionError`, `GATTError` and `PeripheralError` itself; here they keep
    /// their text in `.unsupported` rather than pose as a command failure.
    init(engine error: HostEngineError, peer: BluetoothAddress? = nil) {
        switch error {
        case .notRunning, .alreadyStarted, .transportEnded: self = .notRunning
        case .bringUp(let failure): self = .bringUp(failure)
        case .command(let failure): self = .command(failure)
        case .hardwareError(let code): self = .hardwareError(code: code)
        case .refused(let state, let trigger): self = .refused(ConnectionTriggerRefused(state: state, trigger: trigger))
        case .scanAlreadyRunning: self = .scanAlreadyRunning
        case .connectionAttemptInProgress: self = .connectionAttemptInProgress
        case .connectionFailed(let status):
            self = peer.map { .connectionFailed($0, status) } ?? .command(.failed(HCIOpcode.leCreateConnection, status))
        case .connectionTimeout:
            self = peer.map { .connectionTimeout($0) } ?? .command(.timeout(HCIOpcode.leCreateConnection))
        default:
            self = .unsupported("\(error)")
        }
    }
}
