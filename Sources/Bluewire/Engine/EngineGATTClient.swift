import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine

/// The GATT client of one `EngineConnection` (Core Vol 3 Part G §4), run by the engine: every
/// procedure below is one engine request (`GATTClientRequest`), so a long read of N blobs is one
/// request whose Read Blob Requests the engine sends itself, the peer's connection state machine
/// moves inside the engine, and a server that answers Insufficient Authentication or Encryption
/// gets a paired or encrypted link and the request again when security is configured
/// (`EngineHost.configureSecurity`).
///
/// Each call is also one operation on the client's `queue`, so custom composite operations
/// (`run(_:)`) and the queue's decorators see it as one unit, in order with everything else.
///
/// ```swift
/// let connection = try await host.connect(to: peripheral)
/// let gatt = await connection.gatt
/// try await gatt.exchangeMTU()
/// let database = try await gatt.discoverAll()
/// let value = try await gatt.read(database[0].characteristics[0].characteristic)
/// ```
public struct EngineGATTClient: Sendable {
    let session: EngineGATTSession

    /// The connection this client runs on.
    public var connection: EngineConnection { session.connection }

    /// The queue every operation of this client runs on; it ends with the link (a queue that outlives
    /// links is a `RemotePeripheral`'s).
    public var queue: GATTOperationQueue { session.queue }

    /// What discovery has found so far.
    public var cache: GATTClientCache { session.cache }

    /// Why the link ended, once it has.
    public var disconnectionReason: HCIStatus? { session.disconnection }

    /// The ATT_MTU in force (23 until an exchange).
    public var mtu: Int {
        get async { await connection.mtu }
    }

    /// Runs a custom operation on this connection's queue (after everything queued before it, with
    /// the bearer to itself until it returns). Its ATT requests go through the engine's
    /// `.attRequest`; the engine does not move the state machine for them.
    public func run<Operation: GATTOperation>(
        _ operation: Operation
    ) async throws(GATTError) -> Operation.Result where Operation.Failure == GATTError {
        do throws(GATTError) {
            return try await session.queue.run(operation)
        } catch {
            throw error.naming(session.disconnection)
        }
    }

    /// One engine request as one queued operation.
    func perform(_ request: GATTClientRequest) async throws(GATTError) -> HostCompletion {
        try await run(EngineRequestOperation(session: session, request: request))
    }

    // MARK: MTU and discovery

    /// Exchanges ATT MTUs (Core Vol 3 Part F §3.4.2) and returns the ATT_MTU now in force.
    @discardableResult
    public func exchangeMTU() async throws(GATTError) -> Int {
        guard case .mtu(let mtu) = try await perform(.exchangeMTU) else { throw Self.mismatch }
        return mtu
    }

    /// Discovers the whole database (primary services, their includes, characteristics and
    /// descriptors: Core Vol 3 Part G §4.4.1, §4.5.1, §4.6.1, §4.7.1) as one engine request, and
    /// replaces the cache with it.
    public func discoverAll() async throws(GATTError) -> [DiscoveredService] {
        guard case .services(let database) = try await perform(.discoverAll) else { throw Self.mismatch }
        session.withState { state in
            var cache = GATTClientCache()
            cache.insert(services: database.map(\.service))
            for service in database {
                cache.insert(characteristics: service.characteristics.map(\.characteristic), of: service.service)
                for characteristic in service.characteristics {
                    cache.insert(descriptors: characteristic.descriptors, of: characteristic.characteristic)
                }
            }
            state.cache = cache
        }
        return database
    }

    /// The discovered characteristic `uuid` (in `service`, when given), discovering the database
    /// first when it is not in the cache.
    public func characteristic(_ uuid: BluetoothUUID, in service: BluetoothUUID? = nil) async throws(GATTError) -> GATTCharacteristic? {
        if let found = cache.characteristic(uuid, in: service) { return found }
        _ = try await discoverAll()
        return cache.characteristic(uuid, in: service)
    }

    // MARK: Reads

    /// Reads a discovered characteristic's whole value (Read Long Characteristic Values, §4.8.3):
    /// one engine request however many Read Blob Requests it takes.
    /// - Throws: `.notDiscovered` if the characteristic is not in the cache.
    public func read(_ characteristic: GATTCharacteristic) async throws(GATTError) -> [UInt8] {
        try requireDiscovered(characteristic)
        return try await readLong(handle: characteristic.valueHandle)
    }

    /// Read Characteristic Value or Descriptor (§4.8.1, §4.12.1): at most ATT_MTU − 1 octets.
    public func read(handle: UInt16) async throws(GATTError) -> [UInt8] {
        guard case .value(let value) = try await perform(.read(handle: handle)) else { throw Self.mismatch }
        return value
    }

    /// Read Long Characteristic Values or Descriptors (§4.8.3, §4.12.2), one engine request.
    public func readLong(handle: UInt16) async throws(GATTError) -> [UInt8] {
        guard case .value(let value) = try await perform(.readLong(handle: handle)) else { throw Self.mismatch }
        return value
    }

    /// Read Multiple Variable Length Characteristic Values (§4.8.5): one value per handle (from a
    /// server without it, value by value).
    public func readMultiple(handles: [UInt16]) async throws(GATTError) -> [[UInt8]] {
        guard case .values(let values) = try await perform(.readMultiple(handles: handles)) else { throw Self.mismatch }
        return values
    }

    // MARK: Writes

    /// Writes a discovered characteristic's value with a response: Write Characteristic Value
    /// (§4.9.3) when it fits ATT_MTU − 3 octets, else Write Long Characteristic Values (§4.9.4).
    public func write(_ value: [UInt8], to characteristic: GATTCharacteristic) async throws(GATTError) {
        try requireDiscovered(characteristic)
        if value.count <= (await mtu) - 3 {
            try await write(value, to: characteristic.valueHandle)
        } else {
            try await writeLong(value, to: characteristic.valueHandle)
        }
    }

    /// Write Characteristic Value or Descriptor (§4.9.3, §4.12.3): one Write Request.
    public func write(_ value: [UInt8], to handle: UInt16) async throws(GATTError) {
        _ = try await perform(.write(handle: handle, value: value))
    }

    /// Write Long Characteristic Values (§4.9.4): Prepare Write Requests of ATT_MTU − 5 octets from
    /// `offset`, then Execute Write, one engine request. A refused part or a wrong echo cancels the
    /// server's queue (Execute Write, cancel) before this throws, so nothing partial is written.
    public func writeLong(_ value: [UInt8], to handle: UInt16, offset: UInt16 = 0) async throws(GATTError) {
        if offset == 0 {
            _ = try await perform(.writeLong(handle: handle, value: value))
        } else {
            _ = try await perform(.writeLongAtOffset(handle: handle, value: value, offset: offset))
        }
    }

    /// Write Without Response (§4.9.1): a Write Command, done once handed to the bearer.
    public func writeWithoutResponse(_ value: [UInt8], to handle: UInt16) async throws(GATTError) {
        _ = try await perform(.writeWithoutResponse(handle: handle, value: value))
    }

    /// Signed Write Without Response (§4.9.2): signed with the bond's CSRK on an unencrypted link,
    /// a plain Write Command on an encrypted one (Core Vol 3 Part C §10.4.2).
    public func signedWrite(_ value: [UInt8], to handle: UInt16) async throws(GATTError) {
        _ = try await perform(.signedWrite(handle: handle, value: value))
    }

    // MARK: Subscriptions

    /// Enables notifications (or indications) of a discovered characteristic (§4.10, §4.11) and
    /// returns them as a sequence, registered before the CCCD is written so nothing is missed.
    public func subscribe(to characteristic: GATTCharacteristic, indications: Bool = false) async throws(GATTError) -> CharacteristicSubscription {
        try await subscribe(to: characteristic, indications: indications, handler: nil)
    }

    /// Subscribes, handing each value to `handler` on the host's executor as the packet is
    /// processed (no queue, no task switch); the returned sequence only ends.
    public func subscribe(
        to characteristic: GATTCharacteristic, indications: Bool = false,
        onNotification handler: @escaping @Sendable (GATTNotification) -> Void
    ) async throws(GATTError) -> CharacteristicSubscription {
        try await subscribe(to: characteristic, indications: indications, handler: .some(handler))
    }

    func subscribe(
        to characteristic: GATTCharacteristic, indications: Bool, handler: (@Sendable (GATTNotification) -> Void)?
    ) async throws(GATTError) -> CharacteristicSubscription {
        try requireDiscovered(characteristic)
        let host = connection.host, connection = self.connection
        guard let registration = await host.registerSubscription(on: connection, valueHandle: characteristic.valueHandle, handler: handler) else {
            throw .disconnected(session.disconnection ?? .unknownConnectionIdentifier)
        }
        let known = cache.clientConfigurationHandle(of: characteristic)
        let descriptorHandle: UInt16
        do throws(GATTError) {
            let completion = try await perform(.subscribe(characteristic, indications: indications, descriptorHandle: known))
            guard case .configured(let handle) = completion else { throw Self.mismatch }
            descriptorHandle = handle
        } catch {
            await host.endSubscription(handle: connection.handle, valueHandle: characteristic.valueHandle, id: registration.id)
            throw error
        }
        session.withState { $0.subscriptions[registration.id] = (characteristic, descriptorHandle) }
        return CharacteristicSubscription(
            characteristic: characteristic, descriptorHandle: descriptorHandle, indications: indications,
            id: registration.id, registration: registration.registration, session: session)
    }

    /// Ends the subscription: writes 0x0000 to the CCCD unless another subscription of this client
    /// still uses the characteristic, then ends its sequence.
    public func unsubscribe(_ subscription: CharacteristicSubscription) async throws(GATTError) {
        let characteristic = subscription.characteristic
        let othersOnCharacteristic = session.withState { state in
            state.subscriptions.contains { $0.key != subscription.id && $0.value.characteristic.valueHandle == characteristic.valueHandle }
        }
        if !othersOnCharacteristic {
            _ = try await perform(.unsubscribe(characteristic, descriptorHandle: subscription.descriptorHandle))
        }
        session.withState { $0.subscriptions[subscription.id] = nil }
        await connection.host.endSubscription(handle: connection.handle, valueHandle: characteristic.valueHandle, id: subscription.id)
    }

    func requireDiscovered(_ characteristic: GATTCharacteristic) throws(GATTError) {
        guard session.cache.contains(characteristic) else { throw .notDiscovered(handle: characteristic.valueHandle) }
    }

    /// A completion of another kind than its request's: the engine completes each request with its
    /// own kind, so this names a broken invariant rather than anything a peer sent.
    static var mismatch: GATTError { .host(.notSupported) }
}

/// One engine request run as a queued operation (a value, so the queue holds it without a closure).
struct EngineRequestOperation: GATTOperation {
    let session: EngineGATTSession
    let request: GATTClientRequest

    nonisolated(nonsending) func execute(on context: any ATTRequestPerformer) async throws(GATTError) -> HostCompletion {
        let connection = session.connection
        switch await connection.host.performCancellable(.gatt(connection: connection.handle, request), on: connection) {
        case .success(let completion): return completion
        case .failure(let error): throw GATTError(engine: error, disconnection: session.disconnection)
        }
    }
}

extension GATTClientCache {
    /// The cached characteristic `uuid`, in the service `service` when given.
    func characteristic(_ uuid: BluetoothUUID, in service: BluetoothUUID?) -> GATTCharacteristic? {
        for candidate in services where service == nil || candidate.uuid == service {
            if let found = characteristics[candidate.handle]?.first(where: { $0.uuid == uuid }) { return found }
        }
        return nil
    }
}

extension GATTError {
    /// The engine's error as a GATT operation reports it; a link that is gone names why it ended.
    init(engine error: HostEngineError, disconnection: HCIStatus?) {
        switch error {
        case .refused(let state, let trigger): self = .refused(ConnectionTriggerRefused(state: state, trigger: trigger))
        case .gatt(let failure): self = .procedure(failure)
        case .att(.disconnected): self = .disconnected(disconnection ?? .connectionTerminatedByLocalHost)
        case .att(let bearer): self = .bearer(bearer)
        case .disconnected(let reason): self = .disconnected(disconnection ?? reason)
        case .unknownConnection, .staleConnection, .notRunning, .transportEnded:
            self = .disconnected(disconnection ?? .unknownConnectionIdentifier)
        case .cancelled: self = disconnection.map { .disconnected($0) } ?? .cancelled
        default: self = .host(error)
        }
    }
}
