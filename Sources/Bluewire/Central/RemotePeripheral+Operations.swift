import BluewireCore
import BluewireHostEngine
import BluewireGATT
import BluewireHCI

/// One step queued on a `RemotePeripheral`: a closure over the link the peripheral has when the step
/// runs (after auto-connect has brought one up), with the requirements decorators read.
public struct PeripheralOperation<Result: Sendable>: GATTOperation {
    public typealias Failure = RemotePeripheralError
    public let requirements: OperationRequirements
    let body: @Sendable () async throws(RemotePeripheralError) -> Result

    public nonisolated(nonsending) func execute(on context: any ATTRequestPerformer) async throws(RemotePeripheralError) -> Result {
        try await body()
    }
}

/// An operation of any concrete type, for the timeout and retry proxies built per call.
struct AnyGATTOperation<Result: Sendable>: GATTOperation {
    typealias Failure = RemotePeripheralError
    let wrapped: any GATTOperation<Result, RemotePeripheralError>
    var requirements: OperationRequirements { wrapped.requirements }
    nonisolated(nonsending) func execute(on context: any ATTRequestPerformer) async throws(RemotePeripheralError) -> Result {
        try await wrapped.execute(on: context)
    }
}

/// A `EngineGATTClient`-style operation (one failing with `GATTError`, such as `GATTOperations.read`)
/// queued on a `RemotePeripheral`: its failure as a `RemotePeripheralError`, so that the peripheral's
/// decorators and callers see one error type.
public struct PeripheralGATTOperation<Wrapped: GATTOperation>: GATTOperation where Wrapped.Failure == GATTError {
    public typealias Result = Wrapped.Result
    public typealias Failure = RemotePeripheralError
    public let wrapped: Wrapped

    public init(_ wrapped: Wrapped) { self.wrapped = wrapped }

    public var requirements: OperationRequirements { wrapped.requirements }

    public nonisolated(nonsending) func execute(on context: any ATTRequestPerformer) async throws(RemotePeripheralError) -> Wrapped.Result {
        do throws(GATTError) {
            return try await wrapped.execute(on: context)
        } catch {
            throw RemotePeripheralError(error)
        }
    }
}

extension RemotePeripheral {
    // MARK: Queueing

    /// Queues `operation` (wrapped by the attached decorators) and returns a handle to await or cancel
    /// it: queue several steps, then await them in order.
    public nonisolated func submit<Operation: GATTOperation>(
        _ operation: Operation
    ) async -> RemoteQueuedOperation<Operation.Result> where Operation.Failure == RemotePeripheralError {
        RemoteQueuedOperation(queued: await queue.submit(operation))
    }

    /// Queues a `GATTError`-failing operation (`GATTOperations.read`...): see `submit(_:)`.
    public nonisolated func submit<Operation: GATTOperation>(
        _ operation: Operation
    ) async -> RemoteQueuedOperation<Operation.Result> where Operation.Failure == GATTError {
        await submit(PeripheralGATTOperation(operation))
    }

    /// Queues `operation` and waits for its result, as a typed error.
    public nonisolated func run<Operation: GATTOperation>(
        _ operation: Operation
    ) async throws(RemotePeripheralError) -> Operation.Result where Operation.Failure == RemotePeripheralError {
        try await queue.run(operation)
    }

    /// Queues a `GATTError`-failing operation (`GATTOperations.read`...) and waits for its result:
    /// see `run(_:)`.
    public nonisolated func run<Operation: GATTOperation>(
        _ operation: Operation
    ) async throws(RemotePeripheralError) -> Operation.Result where Operation.Failure == GATTError {
        try await queue.run(PeripheralGATTOperation(operation))
    }

    /// An operation running `body` on the link (`RemotePeripheralLink`: its connection, its GATT client
    /// and UUID lookups), with the per-call proxies: each attempt ends with `timedOut` after `timeout`
    /// on the host's clock, and up to `retries` more attempts are made while `retryWhen` calls the
    /// failure retryable (timeouts by default). Disconnection is never retried here: resuming on a new
    /// link is auto-connect's (`attachAutoConnect(resumeAttempts:)`). `body` fails in the
    /// peripheral's error type (`RemotePeripheralLink.withGATT(_:)` maps the GATT client's).
    public nonisolated func operation<Result: Sendable>(
        requirements: OperationRequirements = [], timeout: Duration? = nil, retries: Int = 0,
        retryWhen: RetryPolicy<RemotePeripheralError> = .timeouts,
        _ body: @escaping @Sendable (RemotePeripheralLink) async throws(RemotePeripheralError) -> Result
    ) -> AnyGATTOperationOf<Result> {
        let slot = self.slot
        var operation: any GATTOperation<Result, RemotePeripheralError> = PeripheralOperation(requirements: requirements) {
            () throws(RemotePeripheralError) in
            guard let link = slot.link else { throw .notConnected }
            return try await body(link)
        }
        if let timeout { operation = AnyGATTOperation(wrapped: operation).timeout(timeout, clock: AnyHostClock(base: host.clock)) }
        if retries > 0 { operation = AnyGATTOperation(wrapped: operation).retry(attempts: retries + 1, when: retryWhen) }
        return AnyGATTOperationOf(operation: AnyGATTOperation(wrapped: operation))
    }

    // MARK: Link

    /// Connects now if there is no link (MTU exchange and wanted subscriptions included), as an
    /// operation queued behind the others.
    public nonisolated func connectOperation() -> PeripheralOperation<Void> {
        PeripheralOperation(requirements: []) { () throws(RemotePeripheralError) in try await self.establishLinkIfNeeded() }
    }

    /// Connects (queued): see `connectOperation()`.
    public nonisolated func connect() async throws(RemotePeripheralError) {
        try await run(connectOperation())
    }

    /// Disconnects the link (queued behind what is already queued); never connects to do so. With
    /// auto-connect, a later operation connects again.
    public nonisolated func disconnectOperation(reason: HCIStatus = .remoteUserTerminatedConnection) -> PeripheralOperation<Void> {
        PeripheralOperation(requirements: .withoutLink) { await self.dropLink(reason: reason) }
    }

    /// Disconnects (queued): see `disconnectOperation(reason:)`.
    public nonisolated func disconnect(reason: HCIStatus = .remoteUserTerminatedConnection) async throws(RemotePeripheralError) {
        try await run(disconnectOperation(reason: reason))
    }

    /// Does nothing but declare `.authorization`: with `AutoAuthorizeDecorator` attached, the
    /// authorizer runs (and returns at once if the link is already authorized).
    public nonisolated func authorizeOperation() -> PeripheralOperation<Void> {
        PeripheralOperation(requirements: .authorization) {}
    }

    // MARK: Reads and writes

    /// Reads the whole value of the characteristic `uuid` (in `service`, if given), resolved on the
    /// current link (Read, then Read Blob while parts come back full: Core Vol 3 Part G §4.8.3).
    public nonisolated func readOperation(
        _ uuid: BluetoothUUID, in service: BluetoothUUID? = nil, requirements: OperationRequirements = [],
        timeout: Duration? = nil, retries: Int = 0, retryWhen: RetryPolicy<RemotePeripheralError> = .timeouts
    ) -> AnyGATTOperationOf<[UInt8]> {
        operation(requirements: requirements, timeout: timeout, retries: retries, retryWhen: retryWhen) { link throws(RemotePeripheralError) in
            let characteristic = try await link.characteristic(uuid, in: service)
            return try await link.withGATT { gatt throws(GATTError) in try await gatt.read(characteristic) }
        }
    }

    /// Reads a characteristic's value: see `readOperation`.
    public nonisolated func read(
        _ uuid: BluetoothUUID, in service: BluetoothUUID? = nil, requirements: OperationRequirements = [],
        timeout: Duration? = nil, retries: Int = 0, retryWhen: RetryPolicy<RemotePeripheralError> = .timeouts
    ) async throws(RemotePeripheralError) -> [UInt8] {
        try await run(readOperation(uuid, in: service, requirements: requirements, timeout: timeout, retries: retries, retryWhen: retryWhen))
    }

    /// Writes the characteristic `uuid` with a response (Write, or prepared writes when the value does
    /// not fit one PDU: Core Vol 3 Part G §4.9.3, §4.9.4).
    public nonisolated func writeOperation(
        _ value: [UInt8], to uuid: BluetoothUUID, in service: BluetoothUUID? = nil, requirements: OperationRequirements = [],
        timeout: Duration? = nil, retries: Int = 0, retryWhen: RetryPolicy<RemotePeripheralError> = .timeouts
    ) -> AnyGATTOperationOf<Void> {
        operation(requirements: requirements, timeout: timeout, retries: retries, retryWhen: retryWhen) { link throws(RemotePeripheralError) in
            let characteristic = try await link.characteristic(uuid, in: service)
            try await link.withGATT { gatt throws(GATTError) in try await gatt.write(value, to: characteristic) }
        }
    }

    /// Writes a characteristic's value with a response: see `writeOperation`.
    public nonisolated func write(
        _ value: [UInt8], to uuid: BluetoothUUID, in service: BluetoothUUID? = nil, requirements: OperationRequirements = [],
        timeout: Duration? = nil, retries: Int = 0, retryWhen: RetryPolicy<RemotePeripheralError> = .timeouts
    ) async throws(RemotePeripheralError) {
        try await run(writeOperation(
            value, to: uuid, in: service, requirements: requirements, timeout: timeout, retries: retries, retryWhen: retryWhen))
    }

    /// Writes the characteristic `uuid` without a response (a Write Command, §4.9.1): done once handed
    /// to the bearer; the peripheral may drop it. The value must fit ATT_MTU − 3 octets.
    public nonisolated func writeWithoutResponseOperation(
        _ value: [UInt8], to uuid: BluetoothUUID, in service: BluetoothUUID? = nil, requirements: OperationRequirements = []
    ) -> AnyGATTOperationOf<Void> {
        operation(requirements: requirements) { link throws(RemotePeripheralError) in
            let handle = try await link.characteristic(uuid, in: service).valueHandle
            try await link.withGATT { gatt throws(GATTError) in try await gatt.writeWithoutResponse(value, to: handle) }
        }
    }

    // MARK: Subscriptions

    /// Enables notifications (or indications) of the characteristic `uuid`, now and on every later
    /// link, and returns them as one sequence (see `RemoteSubscription`).
    public nonisolated func subscribeOperation(
        to uuid: BluetoothUUID, in service: BluetoothUUID? = nil, indications: Bool = false, requirements: OperationRequirements = []
    ) -> PeripheralOperation<RemoteSubscription> {
        PeripheralOperation(requirements: requirements) { () throws(RemotePeripheralError) in
            try await self.addSubscription(uuid, service: service, indications: indications)
        }
    }

    /// Subscribes: see `subscribeOperation`.
    public nonisolated func subscribe(
        to uuid: BluetoothUUID, in service: BluetoothUUID? = nil, indications: Bool = false
    ) async throws(RemotePeripheralError) -> RemoteSubscription {
        try await run(subscribeOperation(to: uuid, in: service, indications: indications))
    }

    /// Disables the subscription (writes its CCCD if there is a link; never connects to do so) and
    /// ends its sequence.
    public nonisolated func unsubscribeOperation(_ subscription: RemoteSubscription) -> PeripheralOperation<Void> {
        PeripheralOperation(requirements: .withoutLink) { () throws(RemotePeripheralError) in try await self.removeSubscription(subscription.id) }
    }

    /// Unsubscribes: see `unsubscribeOperation`.
    public nonisolated func unsubscribe(_ subscription: RemoteSubscription) async throws(RemotePeripheralError) {
        try await run(unsubscribeOperation(subscription))
    }
}

/// A `RemotePeripheral` operation with its per-call proxies (timeout, retries) applied.
public struct AnyGATTOperationOf<Result: Sendable>: GATTOperation {
    public typealias Failure = RemotePeripheralError
    let operation: AnyGATTOperation<Result>
    public var requirements: OperationRequirements { operation.requirements }
    public nonisolated(nonsending) func execute(on context: any ATTRequestPerformer) async throws(RemotePeripheralError) -> Result {
        try await operation.execute(on: context)
    }
}

/// A handle on an operation queued on a `RemotePeripheral`: await its value (typed errors) or cancel it.
public struct RemoteQueuedOperation<Result: Sendable>: Sendable {
    /// The queue's handle (its id, for `GATTOperationQueue.cancel(_:)`).
    public let queued: QueuedOperation<Result, RemotePeripheralError>

    /// The operation's result. Cancelling the awaiting task cancels the operation.
    public var value: Result {
        get async throws(RemotePeripheralError) { try await queued.value }
    }

    /// Whether the outcome is known.
    public var isCompleted: Bool { queued.isCompleted }

    /// Cancels the operation: removed if still queued, its task cancelled if running.
    public func cancel() async { await queued.cancel() }
}
