import BluewireCore
import BluewireGATT
import BluewireHostEngine

// The client's procedures beyond the whole-database discovery, the reads and the writes by handle
// (Core Vol 3 Part G §4.4–§4.9.5). Each is one engine request (`GATTClientRequest`) and one operation
// on the client's queue: the engine sends every ATT request of the procedure itself and moves the
// peer's connection state machine (DiscoverServices, DiscoverCharacteristics, Read or Write, then
// OperationCompleted), and raises security and asks again when the server refuses for it.
extension EngineGATTClient {
    // MARK: Discovery step by step

    /// Discover All Primary Services (§4.4.1). Replaces the cached service list: a service no longer
    /// there is dropped with everything under it. The peer's machine ends in Connected.Idle, where
    /// reads and writes are refused until characteristics are discovered.
    public func discoverServices() async throws(GATTError) -> [GATTService] {
        guard case .primaryServices(let services) = try await perform(.discoverPrimaryServices(uuid: nil)) else { throw Self.mismatch }
        session.withState { state in
            for old in state.cache.services where !services.contains(old) { state.cache.invalidate(old.handleRange) }
            state.cache.insert(services: services)
        }
        return services
    }

    /// Discover Primary Service by Service UUID (§4.4.2): the primary services of type `uuid`, added
    /// to the cache.
    public func discoverServices(uuid: BluetoothUUID) async throws(GATTError) -> [GATTService] {
        guard case .primaryServices(let services) = try await perform(.discoverPrimaryServices(uuid: uuid)) else { throw Self.mismatch }
        session.withState { $0.cache.insert(services: services) }
        return services
    }

    /// Find Included Services (§4.5.1) of `service`.
    public func includedServices(of service: GATTService) async throws(GATTError) -> [GATTIncludedService] {
        guard case .includedServices(let includes) = try await perform(.findIncludedServices(service)) else { throw Self.mismatch }
        return includes
    }

    /// Discover All Characteristics of a Service (§4.6.1), or only those of type `uuid` (Discover
    /// Characteristics by UUID, §4.6.2). The cache records them (merged with what it knows of the
    /// service, when by UUID), so `read(_:)`, `write(_:to:)` and `subscribe(to:)` take them.
    public func discoverCharacteristics(of service: GATTService, uuid: BluetoothUUID? = nil) async throws(GATTError) -> [GATTCharacteristic] {
        guard case .characteristics(let found) = try await perform(.discoverCharacteristics(service, uuid: uuid)) else { throw Self.mismatch }
        session.withState { state in
            if uuid == nil { state.cache.insert(characteristics: found, of: service) } else { state.cache.merge(characteristics: found, of: service) }
        }
        return found
    }

    /// Discover All Characteristic Descriptors (§4.7.1) of `characteristic` (none, with nothing sent,
    /// when its value is its last attribute).
    public func discoverDescriptors(of characteristic: GATTCharacteristic) async throws(GATTError) -> [GATTDescriptor] {
        guard case .descriptors(let descriptors) = try await perform(.discoverDescriptors(characteristic)) else { throw Self.mismatch }
        session.withState { $0.cache.insert(descriptors: descriptors, of: characteristic) }
        return descriptors
    }

    // MARK: Reads

    /// Read Using Characteristic UUID (§4.8.2): every value of type `uuid` in the handle range, each
    /// with its handle (Read By Type Requests until the range is covered).
    public func read(
        uuid: BluetoothUUID, startingHandle: UInt16 = 0x0001, endingHandle: UInt16 = 0xFFFF
    ) async throws(GATTError) -> [GATTHandleValue] {
        let request = GATTClientRequest.readUsingCharacteristicUUID(uuid, startingHandle: startingHandle, endingHandle: endingHandle)
        guard case .handleValues(let values) = try await perform(request) else { throw Self.mismatch }
        return values
    }

    /// Read Multiple Variable Length Characteristic Values (§4.8.5) as the server answers it: one
    /// request, one value per handle (a value cut at ATT_MTU stays cut). A server without the
    /// procedure fails it with its Error Response (Request Not Supported); `readMultiple(handles:)`
    /// falls back to reading value by value instead.
    public func readMultipleVariable(handles: [UInt16]) async throws(GATTError) -> [[UInt8]] {
        guard case .values(let values) = try await perform(.readMultipleVariableLength(handles: handles)) else { throw Self.mismatch }
        return values
    }

    /// Read Multiple Characteristic Values (§4.8.4): the values of two or more handles concatenated
    /// as the server sent them (only a client that knows each length can split them).
    public func readMultipleConcatenated(handles: [UInt16]) async throws(GATTError) -> [UInt8] {
        guard case .value(let value) = try await perform(.readMultipleConcatenated(handles: handles)) else { throw Self.mismatch }
        return value
    }

    // MARK: Writes

    /// Reliable Writes (§4.9.5): every value queued on the server with Prepare Write Requests, each
    /// echo checked, then written together by one Execute Write Request, all or none: a refused part
    /// or a wrong echo cancels the server's queue before this throws.
    public func reliableWrite(_ writes: [(handle: UInt16, value: [UInt8])]) async throws(GATTError) {
        _ = try await perform(.reliableWrite(writes.map { GATTHandleValue(handle: $0.handle, value: $0.value) }))
    }
}

extension EngineGATTClient {
    // MARK: Dump

    /// Discovers the whole database and reads every readable value (characteristic values with the
    /// Read property, long ones whole; every descriptor) as one operation on the queue, nothing else
    /// in between: one engine request for the discovery, then one per value. A read the server
    /// refuses (after the engine raised security where it asked for it) is kept in `readErrors` and
    /// the dump goes on; losing the link ends it. Replaces the cache as `discoverAll()` does.
    public func dump() async throws(GATTError) -> GATTDump {
        let dump = try await run(DumpOperation(session: session))
        session.withState { state in
            var cache = GATTClientCache()
            cache.insert(services: dump.services.map(\.service))
            for service in dump.services {
                cache.insert(characteristics: service.characteristics.map(\.characteristic), of: service.service)
                for characteristic in service.characteristics {
                    cache.insert(descriptors: characteristic.descriptors, of: characteristic.characteristic)
                }
            }
            state.cache = cache
        }
        return dump
    }
}

/// `EngineGATTClient.dump()` as one queued operation: its engine requests run back to back, each
/// as `EngineRequestOperation` does it.
struct DumpOperation: GATTOperation {
    let session: EngineGATTSession

    nonisolated(nonsending) func execute(on context: any ATTRequestPerformer) async throws(GATTError) -> GATTDump {
        guard case .services(let database) = try await EngineRequestOperation(session: session, request: .discoverAll).execute(on: context) else {
            throw EngineGATTClient.mismatch
        }
        var dump = GATTDump(services: database.map { entry in
            GATTDiscoveredService(
                service: entry.service, includes: entry.includes,
                characteristics: entry.characteristics.map {
                    GATTDiscoveredCharacteristic(characteristic: $0.characteristic, descriptors: $0.descriptors)
                })
        })
        for service in database {
            for item in service.characteristics {
                var handles = item.descriptors.map(\.handle)
                if item.characteristic.properties.contains(.read) { handles.insert(item.characteristic.valueHandle, at: 0) }
                for handle in handles {
                    do throws(GATTError) {
                        let read = EngineRequestOperation(session: session, request: .readLong(handle: handle))
                        guard case .value(let value) = try await read.execute(on: context) else { throw EngineGATTClient.mismatch }
                        dump.values[handle] = value
                    } catch {
                        guard case .procedure = error else { throw error }
                        dump.readErrors[handle] = error
                    }
                }
            }
        }
        return dump
    }
}
