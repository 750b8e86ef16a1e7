/// Wraps every operation submitted to an `GATTOperationQueue` (the decorator pattern applied queue-wide):
/// the queue calls `decorate` once per submission, before the operation is queued.
public protocol OperationQueueDecorator: Sendable {
    /// `operation`, wrapped (or returned unchanged if this decorator has nothing to add to it).
    func decorate<Operation: GATTOperation>(_ operation: Operation) -> any GATTOperation<Operation.Result, Operation.Failure>
}

/// Something that can bring the connection up: `RemotePeripheral` (reconnecting to a known peer
/// through `BluetoothHost.connect(to:)`), or a test's stand-in.
public protocol ConnectionEstablisher: Sendable {
    /// Returns once the link and its ATT bearer are up, connecting first if needed. Throws how it
    /// failed as the queue's own end (`.connectionFailed`, `.notConnected`, `.disconnected`...), which
    /// each operation reports in its own error type.
    func ensureConnected() async throws(OperationError)

    /// An operation wrapped by `AutoConnectDecorator` is about to start (an idle timer stops here).
    func operationStarted() async

    /// That operation has ended, however it ended (an idle timer starts here).
    func operationEnded() async
}

extension ConnectionEstablisher {
    public func operationStarted() async {}
    public func operationEnded() async {}
}

/// Ensures the connection is up before each operation runs, so callers can queue operations on a peer
/// that is not (or no longer) connected; and, when `resumeAttempts` allows, runs an operation again on
/// a new link when the link dropped under it.
///
/// An operation interrupted by a disconnection (a failure whose `OperationFailure.queueEnd` is
/// `.disconnected` or `.notConnected`: `GATTError.disconnected`, `RemotePeripheralError.disconnected`
/// / `.notConnected`) is run again from its start after
/// `ensureConnected()` has reconnected, at most `resumeAttempts` times; past that, or with 0, it fails
/// with the disconnection. Only operations that can safely run twice should be resumed: a write whose
/// response was lost with the link may have been applied already (the OTA example's chunks carry
/// their offset for that reason, so a repeated chunk is recognised by the peripheral).
/// Operations that declare `.withoutLink` (disconnecting) are left alone.
public struct AutoConnectDecorator: OperationQueueDecorator {
    public let establisher: any ConnectionEstablisher
    /// How many times one operation may be run again after its link dropped.
    public let resumeAttempts: Int

    public init(establisher: any ConnectionEstablisher, resumeAttempts: Int = 0) {
        self.establisher = establisher
        self.resumeAttempts = max(0, resumeAttempts)
    }

    public func decorate<Operation: GATTOperation>(_ operation: Operation) -> any GATTOperation<Operation.Result, Operation.Failure> {
        if operation.requirements.contains(.withoutLink) { return operation }
        return AutoConnectOperation(operation, establisher: establisher, resumeAttempts: resumeAttempts)
    }
}

/// `wrapped`, run after `establisher.ensureConnected()`, and run again on a new link (at most
/// `resumeAttempts` times) when the link dropped under it.
public struct AutoConnectOperation<Wrapped: GATTOperation>: GATTOperation {
    public typealias Result = Wrapped.Result
    public typealias Failure = Wrapped.Failure
    public let wrapped: Wrapped
    public let establisher: any ConnectionEstablisher
    public let resumeAttempts: Int

    public init(_ wrapped: Wrapped, establisher: any ConnectionEstablisher, resumeAttempts: Int = 0) {
        self.wrapped = wrapped
        self.establisher = establisher
        self.resumeAttempts = resumeAttempts
    }

    public var requirements: OperationRequirements { wrapped.requirements }

    public nonisolated(nonsending) func execute(on context: any ATTRequestPerformer) async throws(Wrapped.Failure) -> Wrapped.Result {
        await establisher.operationStarted()
        var resumed = 0
        while true {
            do throws(Wrapped.Failure) {
                do throws(OperationError) {
                    try await establisher.ensureConnected()
                } catch {
                    throw Wrapped.Failure(error)
                }
                let result = try await wrapped.execute(on: context)
                await establisher.operationEnded()
                return result
            } catch {
                guard resumed < resumeAttempts, !Task.isCancelled, error.isLinkLoss else {
                    await establisher.operationEnded()
                    throw error
                }
                resumed += 1
            }
        }
    }
}
