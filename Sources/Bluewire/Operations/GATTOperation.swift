import BluewireHostEngine
import BluewireATT

/// One GATT operation as a command object: everything it needs is captured when it is built, and
/// `execute(on:)` performs it against a connection's ATT bearer.
///
/// Operations are run by an `GATTOperationQueue`, one at a time per connection, because ATT allows one
/// outstanding request per bearer (Core Vol 3 Part F §3.3.2) and because a composite operation (several
/// ATT exchanges, such as a firmware update) must not have other callers' requests interleaved with its
/// own. A composite operation therefore performs its steps directly on the `context` it is given; it
/// never submits them to the queue it is running on (that would wait for itself).
public protocol GATTOperation<Result, Failure>: Sendable {
    associatedtype Result: Sendable
    /// What the operation throws, and what its caller hears when the queue or a decorator ends it
    /// (a cancellation, a timeout, the link's end: `OperationFailure.init(_:)`). `GATTError` for
    /// `GATTClient`'s and the ready-made operations, `RemotePeripheralError` for `RemotePeripheral`'s.
    associatedtype Failure: OperationFailure = GATTError

    /// What the operation needs before it runs; queue decorators read this (auto-authorize).
    var requirements: OperationRequirements { get }

    /// Performs the operation. Must honour task cancellation (timeouts and `cancel(_:)` use it).
    ///
    /// `nonisolated(nonsending)`: the body runs on the executor of whoever runs it, which for a
    /// `GATTOperationQueue` created with an actor (a `BluetoothHost`'s links) is that actor's, so
    /// the operation's requests reach the host without a hop to the global executor and back.
    nonisolated(nonsending) func execute(on context: any ATTRequestPerformer) async throws(Failure) -> Result
}

extension GATTOperation {
    /// Most operations need nothing beyond a connection.
    public var requirements: OperationRequirements { [] }
}

/// Preconditions an operation declares, for queue decorators to satisfy before it runs.
public struct OperationRequirements: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The attributes it touches need an encrypted or authenticated link, or application authorization
    /// (their permissions would otherwise fail with Insufficient Authentication / Encryption /
    /// Authorization, Core Vol 3 Part F §3.4.1.1).
    public static let authorization = OperationRequirements(rawValue: 1 << 0)

    /// The operation needs no link and must not bring one up (disconnecting): `AutoConnectDecorator`
    /// leaves it alone.
    public static let withoutLink = OperationRequirements(rawValue: 1 << 1)
}

/// Identifies one operation submitted to an `GATTOperationQueue`, for `cancel(_:)`.
public struct OperationID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (lhs: OperationID, rhs: OperationID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "op#\(rawValue)" }
}

/// How the queue and its decorators end an operation other than by its own result. Each operation's
/// `Failure` type is built from it (`OperationFailure.init(_:)`), so the caller hears it in the
/// operation's own error type, and decorators read it back (`OperationFailure.queueEnd`) without casts.
public enum OperationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The connection went away before or while the operation ran (`GATTOperationQueue.failAll(with:)`).
    /// `reason` is the HCI disconnection reason when known (Core Vol 1 Part F).
    case disconnected(reason: UInt8?)
    /// The operation was cancelled: by `GATTOperationQueue.cancel(_:)` or by cancelling the waiting task.
    case cancelled(OperationID?)
    /// `TimeoutOperation` gave up after `timeout`.
    case timedOut(after: Duration)
    /// The ATT bearer failed the running operation's request (a transaction timeout closes it, Core
    /// Vol 3 Part F §3.3.3): what that operation reports when the link's end follows.
    case bearer(ATTBearerError)
    /// There is no link, and nothing (no `AutoConnectDecorator`) may bring one up.
    case notConnected
    /// Bringing the link up failed (`ConnectionEstablisher.ensureConnected()`): the attempt timed
    /// out, the controller refused it, or the host is not running.
    case connectionFailed(HostEngineError)
    /// A decorator's own step failed (an `OperationAuthorizer`); its description.
    case failed(String)

    /// Whether the link went away or is not there (the operation may succeed on a new one).
    public var isLinkLoss: Bool {
        switch self {
        case .disconnected, .notConnected: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .disconnected(let reason?):
            return "disconnected (reason 0x" + String(reason, radix: 16) + ")"
        case .disconnected(nil):
            return "disconnected"
        case .cancelled(let id?):
            return "\(id) cancelled"
        case .cancelled(nil):
            return "cancelled"
        case .timedOut(let timeout):
            return "timed out after \(timeout)"
        case .bearer(let error):
            return "ATT bearer: \(error)"
        case .notConnected:
            return "not connected"
        case .connectionFailed(let error):
            return "\(error)"
        case .failed(let message):
            return message
        }
    }

    public static func == (lhs: OperationError, rhs: OperationError) -> Bool {
        switch (lhs, rhs) {
        case (.disconnected(let a), .disconnected(let b)): a == b
        case (.cancelled(let a), .cancelled(let b)): a == b
        case (.timedOut(let a), .timedOut(let b)): a == b
        case (.bearer(let a), .bearer(let b)): a == b
        case (.notConnected, .notConnected): true
        // HostError is not Equatable: the same case with the same details reads the same.
        case (.connectionFailed(let a), .connectionFailed(let b)): "\(a)" == "\(b)"
        case (.failed(let a), .failed(let b)): a == b
        default: false
        }
    }
}

/// An operation's error type, as the queue and its decorators need it: buildable from the way they
/// end an operation, and readable back for the decisions they make (resume after a link loss, retry
/// after a timeout, authorize after Insufficient Authentication), so that no layer erases errors to
/// `any Error` and casts them back.
public protocol OperationFailure: Error, Sendable {
    /// The error an operation of this type reports when the queue or a decorator ends it.
    init(_ end: OperationError)

    /// This failure as the queue's own end, when it is one (a cancellation, a timeout, a
    /// disconnection); nil for the operation's own failures (an ATT Error Response...).
    var queueEnd: OperationError? { get }

    /// Whether the server refused for lack of security (Insufficient Authentication / Encryption /
    /// Authorization / Encryption Key Size): `AutoAuthorizeDecorator` authorizes, then retries once.
    var isInsufficientSecurity: Bool { get }
}

extension OperationFailure {
    /// Whether the link went away or is not there (`AutoConnectDecorator` may resume on a new one).
    public var isLinkLoss: Bool { queueEnd?.isLinkLoss ?? false }
}

extension OperationError: OperationFailure {
    public init(_ end: OperationError) { self = end }
    public var queueEnd: OperationError? { self }
    public var isInsufficientSecurity: Bool { false }
}
