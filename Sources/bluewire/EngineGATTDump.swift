import Bluewire

extension EngineGATTClient {
    /// `gatt dump` on the engine: the discovered database and every readable value (characteristic
    /// values with the Read property, long ones by Read Blob; every descriptor). A read the server
    /// refuses (an Error Response, after security was raised on demand where it asked for it) is kept
    /// in `readErrors` and the dump goes on; losing the link ends it.
    func dump(_ services: [DiscoveredService]) async throws(GATTFailure) -> GATTDump {
        var dump = GATTDump(services: services.map { entry in
            GATTDiscoveredService(
                service: entry.service, includes: entry.includes,
                characteristics: entry.characteristics.map {
                    GATTDiscoveredCharacteristic(characteristic: $0.characteristic, descriptors: $0.descriptors)
                })
        })
        var handles: [UInt16] = []
        for service in services {
            for item in service.characteristics {
                if item.characteristic.properties.contains(.read) { handles.append(item.characteristic.valueHandle) }
                handles += item.descriptors.map(\.handle)
            }
        }
        for handle in handles {
            do throws(GATTFailure) {
                dump.values[handle] = try await read(handle, long: true)
            } catch {
                guard case .gatt(let refusal)? = error.engineError else { throw error }
                dump.readErrors[handle] = .procedure(refusal)
            }
        }
        return dump
    }
}
