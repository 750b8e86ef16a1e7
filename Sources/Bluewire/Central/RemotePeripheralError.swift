import BluewireCore
import BluewireHostEngine
import BluewireHCI

/// Why an operation queued on a `RemotePeripheral` failed.
public enum RemotePeripheralError: Error, Equatable, Sendable, CustomStringConvertible {
    /// There is no link and the peripheral has no `AutoConnectDecorator` to bring one up (call
    /// `connect()` first, or attach auto-connect).
    case notConnected
    /// The link dropped before or while the operation ran, and the operation was not resumed (no
    /// auto-connect, or its resume attempts were used up). `reason` is the HCI reason from Disconnection
    /// Complete (Core Vol 1 Part F).
    case disconnected(HCIStatus)
    /// Connecting failed: the attempt timed out, the controller refused it, or the host is not running.
    case connectionFailed(HostEngineError)
    /// No characteristic of that UUID (in that service, if one was given) in the peripheral's database,
    /// as discovered on the current link.
    case characteristicNotFound(BluetoothUUID, service: BluetoothUUID?)
    /// The GATT procedure failed (an ATT Error Response, a malformed response, a refused trigger...).
    case gatt(GATTError)
    /// A timeout given to the call (or a `TimeoutOperation`) expired, after its retries if any.
    case timedOut(Duration)
    /// The operation was cancelled (its task, or `cancel(_:)` on the peripheral's queue).
    case cancelled
    /// A custom operation or an authorizer threw an error of its own; its description.
    case operationFailed(String)

    public var description: String {
        switch self {
        case .notConnected: "not connected (and no auto-connect attached)"
        case .disconnected(let reason): "disconnected: \(reason)"
        case .connectionFailed(let error): "\(error)"
        case .characteristicNotFound(let uuid, let service?): "no characteristic \(uuid) in service \(service)"
        case .characteristicNotFound(let uuid, nil): "no characteristic \(uuid)"
        case .gatt(let error): "\(error)"
        case .timedOut(let duration): "timed out after \(duration)"
        case .cancelled: "cancelled"
        case .operationFailed(let message): message
        }
    }

    public static func == (lhs: RemotePeripheralError, rhs: RemotePeripheralError) -> Bool {
        switch (lhs, rhs) {
        case (.notConnected, .notConnected), (.cancelled, .cancelled): true
        case (.disconnected(let a), .disconnected(let b)): a == b
        // HostError is not Equatable: the same case with the same details reads the same.
        case (.connectionFailed(let a), .connectionFailed(let b)): "\(a)" == "\(b)"
        case (.characteristicNotFound(let a, let s), .characteristicNotFound(let b, let t)): a == b && s == t
        case (.gatt(let a), .gatt(let b)): a == b
        case (.timedOut(let a), .timedOut(let b)): a == b
        case (.operationFailed(let a), .operationFailed(let b)): a == b
        default: false
        }
    }

    /// Whether the operation failed because the link went away (or was never there).
    public var isDisconnection: Bool {
        switch self {
        case .disconnected, .notConnected: true
        default: false
        }
    }

    /// The ATT error code, when the server answered with an Error Response.
    public var attErrorCode: ATTErrorCode? {
        if case .gatt(let error) = self { return error.attErrorCode }
        return nil
    }

    /// A `EngineGATTClient` failure as the peripheral's operations report it: a link that went, a timeout
    /// and a cancellation by their own cases; the rest as `.gatt`.
    public init(_ error: GATTError) {
        switch error {
        case .disconnected(let reason): self = .disconnected(reason)
        case .timedOut(let duration): self = .timedOut(duration)
        case .cancelled: self = .cancelled
        case .operationFailed(let message): self = .operationFailed(message)
        default: self = .gatt(error)
        }
    }
}

extension RemotePeripheralError: OperationFailure {
    /// How the peripheral's operations report the queue's and decorators' ends.
    public init(_ end: OperationError) {
        switch end {
        case .disconnected(let reason): self = .disconnected(reason.map { HCIStatus($0) } ?? .unknownConnectionIdentifier)
        case .notConnected: self = .notConnected
        case .cancelled: self = .cancelled
        case .timedOut(let duration): self = .timedOut(duration)
        case .bearer(let error): self = .gatt(.bearer(error))
        case .connectionFailed(let error): self = .connectionFailed(error)
        case .failed(let message): self = .operationFailed(message)
        }
    }

    public var queueEnd: OperationError? {
        switch self {
        case .disconnected(let reason): .disconnected(reason: reason.rawValue)
        case .notConnected: .notConnected
        case .cancelled: .cancelled(nil)
        case .timedOut(let duration): .timedOut(after: duration)
        case .connectionFailed(let error): .connectionFailed(error)
        default: nil
        }
    }

    public var isInsufficientSecurity: Bool {
        if case .gatt(let error) = self { return error.isInsufficientSecurity }
        return false
    }
}

extension OperationError {
    /// A `RemotePeripheral`'s failure as the queue's own end (what `ConnectionEstablisher` and
    /// `OperationAuthorizer` throw): its link, connection, timeout and cancellation cases as
    /// themselves, the rest as `.failed` with its description.
    public init(_ error: RemotePeripheralError) {
        if let end = error.queueEnd {
            self = end
        } else if case .gatt(.bearer(let bearer)) = error {
            self = .bearer(bearer)
        } else {
            self = .failed(error.description)
        }
    }
}
