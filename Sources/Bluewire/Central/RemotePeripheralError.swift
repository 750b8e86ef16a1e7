import BluewireCore
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
    case connectionFailed(HostError)
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

    /// Maps whatever an operation on the peripheral's queue threw.
    static func from(_ error: any Error) -> RemotePeripheralError {
        switch error {
        case let error as RemotePeripheralError:
            return error
        case let error as GATTError:
            switch error {
            case .disconnected(let reason): return .disconnected(reason)
            case .timedOut(let duration): return .timedOut(duration)
            case .cancelled: return .cancelled
            case .operationFailed(let message): return .operationFailed(message)
            default: return .gatt(error)
            }
        case let error as HostError:
            return .connectionFailed(error)
        case let error as OperationError:
            switch error {
            case .disconnected(let reason): return .disconnected(reason.map { HCIStatus($0) } ?? .unknownConnectionIdentifier)
            case .cancelled: return .cancelled
            case .timedOut(let duration): return .timedOut(duration)
            }
        case is CancellationError:
            return .cancelled
        default:
            // ConnectionError, GATTClientError, or the application's own.
            return from(GATTError.from(error, disconnection: nil))
        }
    }
}
