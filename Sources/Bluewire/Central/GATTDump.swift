import BluewireATT
import BluewireCore
import BluewireGATT

/// Everything a client can learn of a server's database: the discovered structure and every value it
/// could read (`GATTClient.dump()`, `bluewire gatt dump`).
public struct GATTDump: Hashable, Sendable {
    /// The discovered services, in handle order.
    public var services: [GATTDiscoveredService]
    /// Values read, by handle: characteristic values with the Read property and every descriptor.
    public var values: [UInt16: [UInt8]]
    /// Reads the server refused (Read Not Permitted, Insufficient Authentication...), by handle.
    public var readErrors: [UInt16: GATTError]

    public init(services: [GATTDiscoveredService], values: [UInt16: [UInt8]] = [:], readErrors: [UInt16: GATTError] = [:]) {
        self.services = services
        self.values = values
        self.readErrors = readErrors
    }

    /// The server's attribute table as the dump reconstructs it, in handle order: service, include
    /// and characteristic declarations with their values as the specification encodes them (Core Vol
    /// 3 Part G §3.1–§3.3), characteristic values and descriptors with the values read (nil if not
    /// readable).
    public var attributes: [GATTDumpAttribute] {
        var table: [GATTDumpAttribute] = []
        for entry in services {
            let service = entry.service
            table.append(GATTDumpAttribute(
                handle: service.handle, type: service.isPrimary ? .primaryService : .secondaryService, value: service.uuid.attBytes))
            for include in entry.includes {
                var value = littleEndian(include.serviceHandle) + littleEndian(include.endHandle)
                if include.uuid.uint16 != nil { value += include.uuid.attBytes }
                table.append(GATTDumpAttribute(handle: include.declarationHandle, type: .include, value: value))
            }
            for item in entry.characteristics {
                let c = item.characteristic
                table.append(GATTDumpAttribute(
                    handle: c.handle, type: .characteristic,
                    value: [c.properties.rawValue] + littleEndian(c.valueHandle) + c.uuid.attBytes))
                table.append(GATTDumpAttribute(
                    handle: c.valueHandle, type: c.uuid, value: values[c.valueHandle], properties: c.properties,
                    readError: readErrors[c.valueHandle]))
                for descriptor in item.descriptors {
                    table.append(GATTDumpAttribute(
                        handle: descriptor.handle, type: descriptor.uuid, value: values[descriptor.handle],
                        readError: readErrors[descriptor.handle]))
                }
            }
        }
        return table.sorted { $0.handle < $1.handle }
    }

    private func littleEndian(_ value: UInt16) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
    }
}

/// One attribute of a `GATTDump`'s table.
public struct GATTDumpAttribute: Hashable, Sendable {
    public var handle: UInt16
    /// The attribute type: «Primary Service», «Characteristic», the characteristic UUID for its
    /// value, the descriptor UUID...
    public var type: BluetoothUUID
    /// The value, when known (declarations always; values and descriptors when readable).
    public var value: [UInt8]?
    /// For a characteristic value: the declaration's properties.
    public var properties: CharacteristicProperties?
    /// Why the value could not be read, if it could not.
    public var readError: GATTError?

    public init(
        handle: UInt16, type: BluetoothUUID, value: [UInt8]?, properties: CharacteristicProperties? = nil,
        readError: GATTError? = nil
    ) {
        self.handle = handle
        self.type = type
        self.value = value
        self.properties = properties
        self.readError = readError
    }
}

extension GATTClient {
    /// Discovers the whole database and reads every readable value (characteristics with the Read
    /// property, with Read Blob for long ones; every descriptor), as one operation. A read the server
    /// refuses is recorded in `readErrors` and the dump goes on; losing the link ends it.
    public func dump() async throws(GATTError) -> GATTDump {
        try await operation { context throws(GATTError) in
            var dump = GATTDump(services: try await self.discoverDatabase(context))
            var handles: [UInt16] = []
            for service in dump.services {
                for item in service.characteristics {
                    if item.characteristic.properties.contains(.read) { handles.append(item.characteristic.valueHandle) }
                    handles += item.descriptors.map(\.handle)
                }
            }
            for handle in handles {
                do throws(GATTError) {
                    dump.values[handle] = try await self.phase(.read) { () throws(GATTError) in
                        try await context.perform(ReadLongCharacteristicValues(handle: handle, mtu: await context.mtu))
                    }
                } catch {
                    guard case .procedure = error else { throw error }
                    dump.readErrors[handle] = error
                }
            }
            return dump
        }
    }
}
