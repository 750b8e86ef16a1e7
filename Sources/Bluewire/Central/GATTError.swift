import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine

/// Why a central-side GATT operation (`GATTClient`) failed. Every case names what a person needs to
/// act on it: the disconnection reason, the refusing state and trigger, the ATT error and handle.
public enum GATTError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The link went away before or while the operation ran; `reason` is the HCI reason the controller
    /// reported in Disconnection Complete (Core Vol 1 Part F), e.g. Remote User Terminated Connection.
    /// Every queued and running operation of the connection fails with this, none hangs.
    case disconnected(HCIStatus)
    /// The connection state machine does not accept the operation in its current state (a read
    /// before any characteristic was discovered is refused in `Connected.Idle`).
    case refused(ConnectionTriggerRefused)
    /// The GATT procedure failed: an ATT Error Response (with the error's specification name), an
    /// unexpected or malformed response, a value too long for the ATT_MTU...
    case procedure(GATTClientError)
    /// The ATT bearer failed the transaction: a 30 s transaction timeout (Core Vol 3 Part F §3.3.3,
    /// after which the bearer is closed and the link dropped), or a PDU longer than ATT_MTU.
    case bearer(ATTBearerError)
    /// A characteristic that is no longer in the client's cache: a Service Changed indication
    /// (Core Vol 3 Part G §7.1) invalidated its handles, or it never came from this client's discovery.
    case notDiscovered(handle: UInt16)
    /// A timeout decorator gave up.
    case timedOut(Duration)
    /// The operation was cancelled (its task, `GATTOperationQueue.cancel`, or the subscription ended).
    case cancelled
    /// A custom operation (`GATTClient.run`) threw an error of its own; its description.
    case operationFailed(String)
    /// The host refused or failed the request for a reason of its own, before or beside the server's
    /// answer: the security the server asked for could not be reached (`.security`, with the SMP
    /// reason), the request did not fit the link (`.linkParameters`), the host is not running.
    case host(HostEngineError)

    public var description: String {
        switch self {
        case .disconnected(let reason): "disconnected: \(reason)"
        case .refused(let refusal): "\(refusal)"
        case .procedure(let error): "GATT: \(error)"
        case .bearer(let error): "ATT bearer: \(error)"
        case .notDiscovered(let handle):
            "handle 0x\(hex(handle, width: 4)) is not in the discovered database (rediscover after Service Changed)"
        case .timedOut(let duration): "timed out after \(duration)"
        case .cancelled: "cancelled"
        case .operationFailed(let message): message
        case .host(let error): "host: \(error)"
        }
    }

    /// Whether the link is gone.
    public var isDisconnection: Bool {
        if case .disconnected = self { return true }
        return false
    }

    /// The ATT error code, when the server answered with an Error Response.
    public var attErrorCode: ATTErrorCode? {
        if case .procedure(let error) = self { return error.attErrorCode }
        return nil
    }

    /// A request's failure (`ATTRequestPerformer`, `Connection`) as a GATT operation reports it.
    /// `disconnection` is the reason recorded when the link dropped, if known: a request that found
    /// the link already gone only knows "unknown connection", while the caller should hear why it went.
    public init(_ error: ConnectionError, disconnection: HCIStatus? = nil) {
        switch error {
        case .disconnected(let reason): self = .disconnected(disconnection ?? reason)
        case .att(.disconnected): self = .disconnected(disconnection ?? .connectionTerminatedByLocalHost)
        case .att(let bearer): self = .bearer(bearer)
        case .attError(let code, let request, let handle):
            self = .procedure(.errorResponse(code, requestOpcode: request, handle: handle))
        case .unexpectedResponse(let opcode): self = .procedure(.unexpectedResponse(request: opcode, received: opcode))
        case .refused(let refusal): self = .refused(refusal)
        case .cancelled, .gatt: self = disconnection.map { .disconnected($0) } ?? .cancelled
        }
    }

    /// This error, where the link's end is known (`disconnection`): a request that failed because the
    /// link went, or was cancelled by its end, names why it went.
    func naming(_ disconnection: HCIStatus?) -> GATTError {
        switch self {
        case .disconnected, .cancelled: disconnection.map { .disconnected($0) } ?? self
        default: self
        }
    }

    /// How the finished operation drives the connection state machine: an answer from the server
    /// (even an Error Response) completes it; a bearer that can no longer be used is a failure; a
    /// disconnection was already reported by the link itself.
    var completionTrigger: ConnectionTrigger? {
        switch self {
        case .disconnected: nil
        case .refused: nil
        case .bearer(.transactionTimeout), .bearer(.closed): .failure
        case .procedure, .bearer, .notDiscovered, .timedOut, .cancelled, .operationFailed, .host: .operationCompleted
        }
    }
}

extension GATTError: OperationFailure {
    /// How `GATTClient`'s operations report the queue's and decorators' ends: a link that is gone
    /// (or never came up) as `.disconnected`, a bearer's failure as `.bearer`, a decorator's own
    /// failure (a connection attempt, an authorizer) as `.operationFailed` with its description.
    public init(_ end: OperationError) {
        switch end {
        case .disconnected(let reason): self = .disconnected(reason.map { HCIStatus($0) } ?? .unknownConnectionIdentifier)
        case .notConnected: self = .disconnected(.unknownConnectionIdentifier)
        case .cancelled: self = .cancelled
        case .timedOut(let duration): self = .timedOut(duration)
        case .bearer(let error): self = .bearer(error)
        case .connectionFailed(let error): self = .host(error)
        case .failed(let message): self = .operationFailed(message)
        }
    }

    public var queueEnd: OperationError? {
        switch self {
        case .disconnected(let reason): .disconnected(reason: reason.rawValue)
        case .cancelled: .cancelled(nil)
        case .timedOut(let duration): .timedOut(after: duration)
        default: nil
        }
    }

    public var isInsufficientSecurity: Bool {
        if case .procedure(let error) = self { return error.isInsufficientSecurity }
        return false
    }
}
