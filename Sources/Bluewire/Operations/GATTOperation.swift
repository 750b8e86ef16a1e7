/// One GATT operation as a command object: everything it needs is captured when it is built, and
/// `execute(on:)` performs it against a connection's ATT bearer.
///
/// Operations are run by an `GATTOperationQueue`, one at a time per connection, because ATT allows one
/// outstanding request per bearer (Core Vol 3 Part F §3.3.2) and because a composite operation (several
/// ATT exchanges, such as a firmware update) must not have other callers' requests interleaved with its
/// own. A composite operation therefore performs its steps directly on the `context` it is given; it
/// never submits them to the queue it is running on (that would wait for itself).
public protocol GATTOperation<Result>: Sendable {
    associatedtype Result: Sendable

    /// What the operation needs before it runs; queue decorators read this (auto-authorize).
    var requirements: OperationRequirements { get }

    /// Performs the operation. Must honour task cancellation (timeouts and `cancel(_:)` use it).
    func execute(on context: any ATTRequestPerformer) async throws -> Result
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

/// How the queue and its decorators end an operation other than by its own result.
public enum OperationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The connection went away before or while the operation ran (`GATTOperationQueue.failAll(with:)`).
    /// `reason` is the HCI disconnection reason when known (Core Vol 1 Part F).
    case disconnected(reason: UInt8?)
    /// The operation was cancelled: by `GATTOperationQueue.cancel(_:)` or by cancelling the waiting task.
    case cancelled(OperationID?)
    /// `TimeoutOperation` gave up after `timeout`.
    case timedOut(after: Duration)

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
        }
    }
}
