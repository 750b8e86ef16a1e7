import BluewireCore
import BluewireGATT
import BluewireHCI

/// One step queued on a `RemotePeripheral`: a closure over the link the peripheral has when the step
/// runs (after auto-connect has brought one up), with the requirements decorators read.
public struct PeripheralOperation<Result: Sendable>: GATTOperation {
    public let requirements: OperationRequirements
    let body: @Sendable () async throws -> Result

    public func execute(on context: any ATTRequestPerformer) async throws -> Result {
        try await body()
    }
}

/// An operation of any concrete type, for the timeout and retry proxies built per call.
struct AnyGATTOperation<Result: Sendable>: GATTOperation {
    let wrapped: any GATTOperation<Result>
    var requirements: OperationRequirements { wrapped.requirements }
    func execute(on context: any ATTRequestPerformer) async throws -> Result {
        try await wrapped.execute(on: context)
    }
}

extension RemotePeripheral {
    // MARK: Queueing

    /// Queues `operation` (wrapped by the attached decorators) and returns a handle to await or cancel
    /// it: queue several steps, then await them in order.
    public nonisolated func submit<Operation: GATTOperation>(_ operation: Operation) async -> RemoteQueuedOperation<Operation.Result> {
        RemoteQueuedOperation(queued: await queue.submit(operation))
    }

    /// Queues `operation` and waits for its result, as a typed error.
    public nonisolated func run<Operation: GATTOperation>(_ operation: Operation) async throws(RemotePeripheralError) -> Operation.Result {
        do {
            return try await queue.run(operation)
        } catch {
            throw .from(error)
        }
    }

    /// An operation running `body` on the link (`RemotePeripheralLink`: its connection, its GATT client
    /// and UUID lookups), with the per-call proxies: each attempt ends with `timedOut` after `timeout`
    /// on the host's clock, and up to `retries` more attempts are made while `retryWhen` calls the
    /// failure retryable (timeouts by default). Disconnection is never retried here: resuming on a new
    /// link is auto-connect's (`attachAutoConnect(resumeAttempts:)`).
    public nonisolated func operation<Result: Sendable>(
        requirements: OperationRequirements = [], timeout: Duration? = nil, retries: Int = 0, retryWhen: RetryPolicy = .timeouts,
        _ body: @escaping @Sendable (RemotePeripheralLink) async throws -> Result
    ) -> AnyGATTOperationOf<Result> {
        let slot = self.slot
        var operation: any GATTOperation<Result> = PeripheralOperation(requirements: requirements) {
            guard let link = slot.link else { throw RemotePeripheralError.notConnected }
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
        PeripheralOperation(requirements: []) { try await self.ensureConnected() }
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
        timeout: Duration? = nil, retries: Int = 0, retryWhen: RetryPolicy = .timeouts
    ) -> AnyGATTOperationOf<[UInt8]> {
        operation(requirements: requirements, timeout: timeout, retries: retries, retryWhen: retryWhen) { link in
            try await link.gatt.read(try await link.characteristic(uuid, in: service))
        }
    }

    /// Reads a characteristic's value: see `readOperation`.
    public nonisolated func read(
        _ uuid: BluetoothUUID, in service: BluetoothUUID? = nil, requirements: OperationRequirements = [],
        timeout: Duration? = nil, retries: Int = 0, retryWhen: RetryPolicy = .timeouts
    ) async throws(RemotePeripheralError) -> [UInt8] {
        try await run(readOperation(uuid, in: service, requirements: requirements, timeout: timeout, retries: retries, retryWhen: retryWhen))
    }

    /// Writes the characteristic `uuid` with a response (Write, or prepared writes when the value does
    /// not fit one PDU: Core Vol 3 Part G §4.9.3, §4.9.4).
    public nonisolated func writeOperation(
        _ value: [UInt8], to uuid: BluetoothUUID, in service: BluetoothUUID? = nil, requirements: OperationRequirements = [],
        timeout: Duration? = nil, retries: Int = 0, retryWhen: RetryPolicy = .timeouts
    ) -> AnyGATTOperationOf<Void> {
        operation(requirements: requirements, timeout: timeout, retries: retries, retryWhen: retryWhen) { link in
            try await link.gatt.write(value, to: try await link.characteristic(uuid, in: service))
        }
    }

    /// Writes a characteristic's value with a response: see `writeOperation`.
    public nonisolated func write(
        _ value: [UInt8], to uuid: BluetoothUUID, in service: BluetoothUUID? = nil, requirements: OperationRequirements = [],
        timeout: Duration? = nil, retries: Int = 0, retryWhen: RetryPolicy = .timeouts
    ) async throws(RemotePeripheralError) {
        try await run(writeOperation(
            value, to: uuid, in: service, requirements: requirements, timeout: timeout, retries: retries, retryWhen: retryWhen))
    }

    /// Writes the characteristic `uuid` without a response (a Write Command, §4.9.1): done once handed
    /// to the bearer; the peripheral may drop it. The value must fit ATT_MTU − 3 octets.
    public nonisolated func writeWithoutResponseOperation(
        _ value: [UInt8], to uuid: BluetoothUUID, in service: BluetoothUUID? = nil, requirements: OperationRequirements = []
    ) -> AnyGATTOperationOf<Void> {
        operation(requirements: requirements) { link in
            try await link.gatt.writeWithoutResponse(value, to: try await link.characteristic(uuid, in: service).valueHandle)
        }
    }

    // MARK: Subscriptions

    /// Enables notifications (or indications) of the characteristic `uuid`, now and on every later
    /// link, and returns them as one sequence (see `RemoteSubscription`).
    public nonisolated func subscribeOperation(
        to uuid: BluetoothUUID, in service: BluetoothUUID? = nil, indications: Bool = false, requirements: OperationRequirements = []
    ) -> PeripheralOperation<RemoteSubscription> {
        PeripheralOperation(requirements: requirements) {
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
        PeripheralOperation(requirements: .withoutLink) { try await self.removeSubscription(subscription.id) }
    }

    /// Unsubscribes: see `unsubscribeOperation`.
    public nonisolated func unsubscribe(_ subscription: RemoteSubscription) async throws(RemotePeripheralError) {
        try await run(unsubscribeOperation(subscription))
    }
}

/// A `RemotePeripheral` operation with its per-call proxies (timeout, retries) applied.
public struct AnyGATTOperationOf<Result: Sendable>: GATTOperation {
    let operation: AnyGATTOperation<Result>
    public var requirements: OperationRequirements { operation.requirements }
    public func execute(on context: any ATTRequestPerformer) async throws -> Result {
        try await operation.execute(on: context)
    }
}

/// A handle on an operation queued on a `RemotePeripheral`: await its value (typed errors) or cancel it.
public struct RemoteQueuedOperation<Result: Sendable>: Sendable {
    /// The queue's handle (its id, for `GATTOperationQueue.cancel(_:)`).
    public let queued: QueuedOperation<Result>

    /// The operation's result. Cancelling the awaiting task cancels the operation.
    public var value: Result {
        get async throws(RemotePeripheralError) {
            do {
                return try await queued.value
            } catch {
                throw .from(error)
            }
        }
    }

    /// Whether the outcome is known.
    public var isCompleted: Bool { queued.isCompleted }

    /// Cancels the operation: removed if still queued, its task cancelled if running.
    public func cancel() async { await queued.cancel() }
}
