import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI

/// The central-side GATT client of one connection (Core Vol 3 Part G §4): discovery, reads, writes
/// and subscriptions, each run as an operation on the connection's `GATTOperationQueue`, one at a time
/// (ATT allows one outstanding request per bearer, Vol 3 Part F §3.3.2), and each driving the
/// connection state machine (Docs/Design.md).
///
/// ```swift
/// let connection = try await host.connect(to: peripheral)
/// let gatt = await connection.gatt
/// try await gatt.exchangeMTU()
/// let services = try await gatt.discoverServices()
/// let characteristics = try await gatt.discoverCharacteristics(of: services[0])
/// let value = try await gatt.read(characteristics[0])
/// let heartRate = try await gatt.subscribe(to: characteristics[1])
/// for try await notification in heartRate { print(notification.value) }
/// ```
///
/// State machine: discovery fires `DiscoverServices` / `DiscoverCharacteristics`, reads `Read`, writes
/// (and CCCD writes) `Write`, a first subscription `EnableNotifications`, the last unsubscription
/// `DisableNotifications`; an answer from the server (even an Error Response) fires
/// `OperationCompleted`, a bearer that cannot be used any more (transaction timeout) `Failure`. A
/// trigger the current state refuses fails the operation with `GATTError.refused` before anything is
/// sent: a read before any characteristic was discovered is refused in `Connected.Idle`. When the link
/// drops, every queued and running operation fails with `GATTError.disconnected(reason)` and the
/// machine is back in `Disconnected.Initial`; when a failure ended it (an ATT transaction timeout, a
/// controller Hardware Error, the transport lost) the machine is in `Error` until
/// `BluetoothHost.reset(_:)`. The machine is the peer's (`BluetoothHost.state(of:)`), which outlives
/// the link.
public struct GATTClient: Sendable {
    let session: GATTClientSession

    init(session: GATTClientSession) {
        self.session = session
    }

    /// The connection this client runs on.
    public var connection: Connection { session.connection }

    /// The queue every operation of this client runs on. Submit custom composite operations with
    /// `run(_:)` (or to the queue directly) so they never interleave with this client's. It ends with
    /// the link; for a queue that outlives disconnections (auto-connect, resume), use `RemotePeripheral`.
    public var queue: GATTOperationQueue { session.queue }

    /// What discovery has found so far, minus what Service Changed indications invalidated.
    public var cache: GATTClientCache { session.cache }

    /// The state machine's current state; after the link dropped, the state it ended in.
    public var state: ConnectionState { session.connectionState }

    /// Why the link ended, once it has.
    public var disconnectionReason: HCIStatus? { session.disconnection }

    /// Every transition of the connection state machine from now on; finishes when the link ends
    /// (after the transition to `Disconnected`).
    public func transitions() -> AsyncStream<ConnectionTransition> { session.transitions() }

    /// The handle ranges each Service Changed indication invalidated (already dropped from `cache`;
    /// discover them again). Finishes when the link ends.
    public func serviceChanges() -> AsyncStream<ClosedRange<UInt16>> { session.serviceChanges() }

    // MARK: Running operations

    /// Runs a custom operation on this connection's queue (after everything queued before it, with
    /// the bearer to itself until it returns). It does not drive the state machine.
    public func run<Operation: GATTOperation>(
        _ operation: Operation
    ) async throws(GATTError) -> Operation.Result where Operation.Failure == GATTError {
        do throws(GATTError) {
            return try await session.queue.run(operation)
        } catch {
            // A request that found the link already gone only knows "unknown connection": name why it went.
            throw error.naming(session.disconnection)
        }
    }

    /// Runs `body` as one queued operation.
    func operation<Result: Sendable>(
        _ body: nonisolated(nonsending) @escaping @Sendable (_ context: any ATTRequestPerformer) async throws(GATTError) -> Result
    ) async throws(GATTError) -> Result {
        try await run(ClientOperation(body: body))
    }

    /// One state-machine phase inside an operation: fires `trigger` (refusals and a dropped link
    /// throw before anything is sent), runs `body`, then fires what its outcome calls for.
    nonisolated(nonsending) func phase<Result>(
        _ trigger: ConnectionTrigger, _ body: nonisolated(nonsending) () async throws(GATTError) -> Result
    ) async throws(GATTError) -> Result {
        if let reason = session.disconnection { throw .disconnected(reason) }
        do throws(GATTError) {
            try await connection.host.fireGATTTrigger(trigger, on: connection)
        } catch {
            // The link may have ended while this hopped to the Host: report why it ended.
            throw error.naming(session.disconnection)
        }
        let result: Result
        do throws(GATTError) {
            result = try await body()
        } catch {
            let mapped = error.naming(session.disconnection)
            if let trigger = mapped.completionTrigger {
                try await complete(trigger, cause: trigger == .failure ? .gatt(mapped) : nil)
            }
            throw mapped
        }
        try await complete(.operationCompleted)
        return result
    }

    /// Fires what ends the phase. A link that ended meanwhile has reported its own `Disconnect` (or
    /// `Failure`): nothing more to fire, and the operation reports the disconnection as usual. A
    /// refusal on a live link cannot happen by construction (the queue runs one operation at a time,
    /// so the machine is still in the state this phase's trigger moved it to, which accepts
    /// `OperationCompleted` and `Failure`); should it happen, it is thrown, not hidden.
    private nonisolated(nonsending) func complete(_ trigger: ConnectionTrigger, cause: ConnectionFailureCause? = nil) async throws(GATTError) {
        guard session.disconnection == nil else { return }
        do {
            try await connection.host.fireGATTTrigger(trigger, on: connection, cause: cause)
        } catch {
            if case .disconnected = error { return }
            throw error
        }
    }

    // MARK: MTU

    /// Exchanges ATT MTUs (Core Vol 3 Part F §3.4.2; a client does it once per connection) and
    /// returns the ATT_MTU now in force, the smaller of both sides' Rx MTUs.
    @discardableResult
    public func exchangeMTU() async throws(GATTError) -> Int {
        let connection = self.connection
        return try await operation { _ throws(GATTError) in
            do throws(ConnectionError) {
                return try await connection.exchangeMTU()
            } catch {
                throw GATTError(error)
            }
        }
    }

    /// The ATT_MTU in force (23 until an exchange).
    public var mtu: Int {
        get async { await connection.mtu }
    }

    // MARK: Discovery

    /// Discover All Primary Services (Core Vol 3 Part G §4.4.1). Replaces the cached service list:
    /// services no longer there are dropped with everything under them.
    public func discoverServices() async throws(GATTError) -> [GATTService] {
        try await operation { context throws(GATTError) in try await self.discoverAllServices(context) }
    }

    nonisolated(nonsending) func discoverAllServices(_ context: any ATTRequestPerformer) async throws(GATTError) -> [GATTService] {
        let services = try await phase(.discoverServices) { () throws(GATTError) in try await context.perform(DiscoverAllPrimaryServices()) }
        session.withState { state in
            for old in state.cache.services where !services.contains(old) { state.cache.invalidate(old.handleRange) }
            state.cache.insert(services: services)
        }
        return services
    }

    /// Discover Primary Service by Service UUID (§4.4.2).
    public func discoverServices(uuid: BluetoothUUID) async throws(GATTError) -> [GATTService] {
        try await operation { context throws(GATTError) in
            let services = try await self.phase(.discoverServices) { () throws(GATTError) in
                try await context.perform(DiscoverPrimaryServiceByServiceUUID(uuid: uuid))
            }
            self.session.withState { $0.cache.insert(services: services) }
            return services
        }
    }

    /// Find Included Services (§4.5.1) of `service`.
    public func includedServices(of service: GATTService) async throws(GATTError) -> [GATTIncludedService] {
        try await operation { context throws(GATTError) in try await self.findIncludes(of: service, context) }
    }

    nonisolated(nonsending) func findIncludes(of service: GATTService, _ context: any ATTRequestPerformer) async throws(GATTError) -> [GATTIncludedService] {
        let includes = try await phase(.discoverCharacteristics) { () throws(GATTError) in try await context.perform(FindIncludedServices(of: service)) }
        session.withState { $0.includes[service.handle] = includes }
        return includes
    }

    /// Discover All Characteristics of a Service (§4.6.1), or by UUID (§4.6.2).
    public func discoverCharacteristics(of service: GATTService, uuid: BluetoothUUID? = nil) async throws(GATTError) -> [GATTCharacteristic] {
        try await operation { context throws(GATTError) in try await self.findCharacteristics(of: service, uuid: uuid, context) }
    }

    nonisolated(nonsending) func findCharacteristics(
        of service: GATTService, uuid: BluetoothUUID?, _ context: any ATTRequestPerformer
    ) async throws(GATTError) -> [GATTCharacteristic] {
        let found = try await phase(.discoverCharacteristics) { () throws(GATTError) in
            try await context.perform(DiscoverCharacteristics(of: service, uuid: uuid))
        }
        session.withState { state in
            if uuid == nil { state.cache.insert(characteristics: found, of: service) } else { state.cache.merge(characteristics: found, of: service) }
        }
        return found
    }

    /// Discover All Characteristic Descriptors (§4.7.1) of `characteristic`.
    public func discoverDescriptors(of characteristic: GATTCharacteristic) async throws(GATTError) -> [GATTDescriptor] {
        try await operation { context throws(GATTError) in try await self.findDescriptors(of: characteristic, context) }
    }

    nonisolated(nonsending) func findDescriptors(of characteristic: GATTCharacteristic, _ context: any ATTRequestPerformer) async throws(GATTError) -> [GATTDescriptor] {
        let descriptors = try await phase(.discoverCharacteristics) { () throws(GATTError) in
            try await context.perform(DiscoverAllCharacteristicDescriptors(of: characteristic))
        }
        session.withState { $0.cache.insert(descriptors: descriptors, of: characteristic) }
        return descriptors
    }

    /// Discovers the whole database as one operation (no other operation gets in between): all
    /// primary services, then for each its included services, characteristics and their descriptors.
    public func discoverAll() async throws(GATTError) -> [GATTDiscoveredService] {
        try await operation { context throws(GATTError) in try await self.discoverDatabase(context) }
    }

    nonisolated(nonsending) func discoverDatabase(_ context: any ATTRequestPerformer) async throws(GATTError) -> [GATTDiscoveredService] {
        var discovered: [GATTDiscoveredService] = []
        for service in try await discoverAllServices(context) {
            let includes = try await findIncludes(of: service, context)
            var characteristics: [GATTDiscoveredCharacteristic] = []
            for characteristic in try await findCharacteristics(of: service, uuid: nil, context) {
                let descriptors = try await findDescriptors(of: characteristic, context)
                characteristics.append(GATTDiscoveredCharacteristic(characteristic: characteristic, descriptors: descriptors))
            }
            discovered.append(GATTDiscoveredService(service: service, includes: includes, characteristics: characteristics))
        }
        return discovered
    }
}

extension Connection {
    /// The GATT client of this connection: its operation queue, discovered database and
    /// subscriptions. Every call returns the same client for the same link.
    public var gatt: GATTClient {
        get async { GATTClient(session: await host.gattClientSession(for: self)) }
    }
}

/// A queued operation made of a closure (how `GATTClient` builds its composite operations).
struct ClientOperation<Result: Sendable>: GATTOperation {
    let body: nonisolated(nonsending) @Sendable (any ATTRequestPerformer) async throws(GATTError) -> Result

    nonisolated(nonsending) func execute(on context: any ATTRequestPerformer) async throws(GATTError) -> Result {
        try await body(context)
    }
}

/// A service with everything discovered under it.
public struct GATTDiscoveredService: Hashable, Sendable {
    public var service: GATTService
    public var includes: [GATTIncludedService]
    public var characteristics: [GATTDiscoveredCharacteristic]

    public init(service: GATTService, includes: [GATTIncludedService], characteristics: [GATTDiscoveredCharacteristic]) {
        self.service = service
        self.includes = includes
        self.characteristics = characteristics
    }
}

/// A characteristic with its descriptors.
public struct GATTDiscoveredCharacteristic: Hashable, Sendable {
    public var characteristic: GATTCharacteristic
    public var descriptors: [GATTDescriptor]

    public init(characteristic: GATTCharacteristic, descriptors: [GATTDescriptor]) {
        self.characteristic = characteristic
        self.descriptors = descriptors
    }
}
