/// Wraps every operation submitted to an `GATTOperationQueue` (the decorator pattern applied queue-wide):
/// the queue calls `decorate` once per submission, before the operation is queued.
public protocol OperationQueueDecorator: Sendable {
    /// `operation`, wrapped (or returned unchanged if this decorator has nothing to add to it).
    func decorate<Operation: GATTOperation>(_ operation: Operation) -> any GATTOperation<Operation.Result>
}

/// Something that can bring the connection up (the Host's central, reconnecting to a known peer).
public protocol ConnectionEstablisher: Sendable {
    /// Returns once the link and its ATT bearer are up, connecting first if needed.
    func ensureConnected() async throws
}

/// Ensures the connection is up before each operation runs, so callers can queue operations on a peer
/// that is not (or no longer) connected.
public struct AutoConnectDecorator: OperationQueueDecorator {
    public let establisher: any ConnectionEstablisher

    public init(establisher: any ConnectionEstablisher) {
        self.establisher = establisher
    }

    public func decorate<Operation: GATTOperation>(_ operation: Operation) -> any GATTOperation<Operation.Result> {
        AutoConnectOperation(operation, establisher: establisher)
    }
}

/// `wrapped`, run after `establisher.ensureConnected()`.
public struct AutoConnectOperation<Wrapped: GATTOperation>: GATTOperation {
    public typealias Result = Wrapped.Result
    public let wrapped: Wrapped
    public let establisher: any ConnectionEstablisher

    public init(_ wrapped: Wrapped, establisher: any ConnectionEstablisher) {
        self.wrapped = wrapped
        self.establisher = establisher
    }

    public var requirements: OperationRequirements { wrapped.requirements }

    public func execute(on context: any ATTRequestPerformer) async throws -> Wrapped.Result {
        try await establisher.ensureConnected()
        return try await wrapped.execute(on: context)
    }
}
