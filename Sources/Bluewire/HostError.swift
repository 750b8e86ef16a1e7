import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireTransport

/// Why a Host operation failed. Every case carries the context a person needs to act on it.
public enum HostError: Error, Sendable, CustomStringConvertible {
    /// An HCI command failed: timeout (naming the opcode), an error status (naming the status), or a
    /// malformed answer.
    case command(CommandError)
    /// Controller bring-up failed at one of its commands.
    case bringUp(BringUpError)
    /// The transport failed or closed.
    case transport(TransportError)
    /// The Host has not been started (`start()`), or it was closed.
    case notRunning
    /// The controller reported a hardware error; the Host reset it.
    case hardwareError(code: UInt8)
    /// The state machine refused the operation in its current state.
    case refused(ConnectionTriggerRefused)
    /// A scan is already running (one scan at a time per controller).
    case scanAlreadyRunning
    /// Connecting did not complete in time; the attempt was cancelled.
    case connectionTimeout(BluetoothAddress)
    /// The controller reported the connection attempt failed with this status.
    case connectionFailed(BluetoothAddress, HCIStatus)
    /// A connection is already being created (the controller allows one LE Create Connection at a time).
    case connectionAttemptInProgress
    /// The operation needs a capability the controller does not have.
    case unsupported(String)

    public var description: String {
        switch self {
        case .command(let error): "HCI command error: \(error)"
        case .bringUp(let error): "\(error)"
        case .transport(let error): "transport error: \(error)"
        case .notRunning: "the host is not running"
        case .hardwareError(let code): "controller hardware error 0x\(hex(code, width: 2)); the controller was reset"
        case .refused(let refusal): "\(refusal)"
        case .scanAlreadyRunning: "a scan is already running"
        case .connectionTimeout(let address): "connecting to \(address) timed out"
        case .connectionFailed(let address, let status): "connecting to \(address) failed: \(status)"
        case .connectionAttemptInProgress: "another connection attempt is in progress"
        case .unsupported(let what): "not supported by this controller: \(what)"
        }
    }
}
