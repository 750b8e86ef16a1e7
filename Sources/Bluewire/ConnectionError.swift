import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI

/// Why an operation on a connection failed.
public enum ConnectionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The connection ended (reason as the controller reported it); every pending operation fails so.
    case disconnected(HCIStatus)
    /// The ATT bearer refused or failed the request (timeout, closed, PDU too long...).
    case att(ATTBearerError)
    /// The peer answered with an ATT Error Response.
    case attError(ATTErrorCode, request: ATTOpcode, handle: UInt16)
    /// The peer's response did not fit the procedure.
    case unexpectedResponse(ATTOpcode)
    /// A GATT procedure failed.
    case gatt(String)
    /// The connection state machine refused the operation in its current state.
    case refused(ConnectionTriggerRefused)
    /// The operation was cancelled.
    case cancelled

    public var description: String {
        switch self {
        case .disconnected(let reason): "disconnected: \(reason)"
        case .att(let error): "ATT: \(error)"
        case .attError(let code, let request, let handle): "ATT error \(code) for \(request) on handle 0x\(hex(handle, width: 4))"
        case .unexpectedResponse(let opcode): "unexpected ATT response \(opcode)"
        case .gatt(let message): "GATT: \(message)"
        case .refused(let refusal): "\(refusal)"
        case .cancelled: "cancelled"
        }
    }
}
