import BluewireCore
import BluewireGATT

/// The part of one GATT server's attribute table that a capture's discovery responses revealed
/// (Core Vol 3 Part G §4.4–§4.7): services from Read By Group Type and Find By Type Value, includes and
/// characteristic declarations from Read By Type, and attribute types from Find Information.
///
/// Kept per connection and per server, never shared: a handle means nothing outside the database of
/// the server that assigned it, and two connections may talk to different devices on the same handle.
public struct DiscoveredGATTTable: Sendable, Hashable {
    /// A service declaration (§3.1).
    public struct Service: Sendable, Hashable {
        public var handle: UInt16
        public var endHandle: UInt16
        public var uuid: BluetoothUUID
        public var isPrimary: Bool
    }

    /// An include declaration (§3.2).
    public struct Include: Sendable, Hashable {
        public var handle: UInt16
        public var includedServiceHandle: UInt16
        public var endGroupHandle: UInt16
        /// Present when the included service has a 16-bit UUID (the declaration carries it then).
        public var uuid: BluetoothUUID?

        /// The declaration's attribute value (§3.2, Table 3.2).
        public var value: [UInt8] {
            var out = [UInt8(truncatingIfNeeded: includedServiceHandle), UInt8(truncatingIfNeeded: includedServiceHandle >> 8),
                       UInt8(truncatingIfNeeded: endGroupHandle), UInt8(truncatingIfNeeded: endGroupHandle >> 8)]
            if let uuid, uuid.uint16 != nil { out.append(contentsOf: uuid.attBytes) }
            return out
        }
    }

    /// A characteristic declaration (§3.3.1).
    public struct Characteristic: Sendable, Hashable {
        public var declarationHandle: UInt16
        public var properties: CharacteristicProperties
        public var valueHandle: UInt16
        public var uuid: BluetoothUUID

        /// The declaration's attribute value: properties, value handle, UUID (§3.3.1, Table 3.4).
        public var declarationValue: [UInt8] {
            CharacteristicDeclaration(properties: properties, valueHandle: valueHandle, uuid: uuid).value
        }
    }

    public private(set) var services: [UInt16: Service] = [:]
    public private(set) var includes: [UInt16: Include] = [:]
    public private(set) var characteristics: [UInt16: Characteristic] = [:]
    /// Attribute types by handle, from every response that names them.
    public private(set) var attributeTypes: [UInt16: BluetoothUUID] = [:]

    public init() {}

    /// Whether discovery revealed nothing.
    public var isEmpty: Bool { attributeTypes.isEmpty }

    mutating func addService(handle: UInt16, endHandle: UInt16, uuid: BluetoothUUID, isPrimary: Bool) {
        services[handle] = Service(handle: handle, endHandle: endHandle, uuid: uuid, isPrimary: isPrimary)
        attributeTypes[handle] = isPrimary ? .primaryService : .secondaryService
    }

    mutating func addInclude(_ include: Include) {
        includes[include.handle] = include
        attributeTypes[include.handle] = .include
    }

    mutating func addCharacteristic(_ characteristic: Characteristic) {
        characteristics[characteristic.declarationHandle] = characteristic
        attributeTypes[characteristic.declarationHandle] = .characteristic
        // The value attribute's type is the characteristic UUID (§3.3.2).
        attributeTypes[characteristic.valueHandle] = characteristic.uuid
    }

    /// A type learned from Find Information or Read By Type; a declaration learned otherwise keeps its type.
    mutating func setType(_ type: BluetoothUUID, of handle: UInt16) {
        if services[handle] != nil || includes[handle] != nil || characteristics[handle] != nil { return }
        attributeTypes[handle] = type
    }

    /// Adds everything `other` discovered; `other` wins where both know a handle.
    public mutating func merge(_ other: DiscoveredGATTTable) {
        for (handle, service) in other.services { services[handle] = service }
        for (handle, include) in other.includes { includes[handle] = include }
        for (handle, characteristic) in other.characteristics { characteristics[handle] = characteristic }
        for (handle, type) in other.attributeTypes { attributeTypes[handle] = type }
    }

    /// The characteristic whose value attribute is `handle`.
    public func characteristic(valueHandle handle: UInt16) -> Characteristic? {
        for characteristic in characteristics.values where characteristic.valueHandle == handle { return characteristic }
        return nil
    }
}

/// The discovered table as a tree: services holding includes and characteristics, characteristics
/// holding descriptors. Attributes discovery placed outside any known service are kept apart.
public struct DiscoveredGATTTree: Sendable, Hashable {
    public struct Descriptor: Sendable, Hashable {
        public var handle: UInt16
        public var uuid: BluetoothUUID
    }

    public struct Characteristic: Sendable, Hashable {
        public var declaration: DiscoveredGATTTable.Characteristic
        /// The last handle of the characteristic: before the next declaration or the service's end.
        public var endHandle: UInt16
        public var descriptors: [Descriptor]
    }

    public struct Service: Sendable, Hashable {
        public var declaration: DiscoveredGATTTable.Service
        public var includes: [DiscoveredGATTTable.Include]
        public var characteristics: [Characteristic]
    }

    public var services: [Service]
    /// Characteristics whose service was not discovered in the capture (it started mid-discovery).
    public var orphanCharacteristics: [Characteristic]
    /// Attributes of known type that belong to no declaration seen (types from Find Information only).
    public var orphanAttributes: [Descriptor]

    /// Value and descriptor handles of every characteristic in the tree.
    public var characteristicHandles: Set<UInt16> {
        var handles = Set<UInt16>()
        for characteristic in services.flatMap({ $0.characteristics }) + orphanCharacteristics {
            handles.insert(characteristic.declaration.valueHandle)
            for descriptor in characteristic.descriptors { handles.insert(descriptor.handle) }
        }
        return handles
    }

    public init(_ table: DiscoveredGATTTable) {
        let serviceList = table.services.values.sorted { $0.handle < $1.handle }
        let characteristicList = table.characteristics.values.sorted { $0.declarationHandle < $1.declarationHandle }
        let includeList = table.includes.values.sorted { $0.handle < $1.handle }
        let declarationHandles = Set(table.services.keys).union(table.includes.keys).union(table.characteristics.keys)
        var claimed = declarationHandles
        for characteristic in characteristicList { claimed.insert(characteristic.valueHandle) }

        func serviceIndex(containing handle: UInt16) -> Int? {
            var found: Int?
            for (i, service) in serviceList.enumerated() where service.handle <= handle && handle <= service.endHandle {
                found = i
            }
            return found
        }

        var characteristicsByService: [[Characteristic]] = Array(repeating: [], count: serviceList.count)
        var orphans: [Characteristic] = []
        for declaration in characteristicList {
            let owner = serviceIndex(containing: declaration.declarationHandle)
            var end: UInt16 = owner.map { serviceList[$0].endHandle } ?? 0xFFFF
            // The next declaration of any kind ends this characteristic (§3.3).
            for next in declarationHandles where next > declaration.declarationHandle && next <= end {
                end = next - 1
            }
            var descriptors: [Descriptor] = []
            for (handle, type) in table.attributeTypes
            where handle > declaration.valueHandle && handle <= end && !claimed.contains(handle) {
                descriptors.append(Descriptor(handle: handle, uuid: type))
            }
            descriptors.sort { $0.handle < $1.handle }
            for descriptor in descriptors { claimed.insert(descriptor.handle) }
            let node = Characteristic(declaration: declaration, endHandle: end, descriptors: descriptors)
            if let owner { characteristicsByService[owner].append(node) } else { orphans.append(node) }
        }

        var built: [Service] = []
        for (i, service) in serviceList.enumerated() {
            let includes = includeList.filter { $0.handle > service.handle && $0.handle <= service.endHandle }
            built.append(Service(declaration: service, includes: includes, characteristics: characteristicsByService[i]))
        }
        services = built
        orphanCharacteristics = orphans
        var rest: [Descriptor] = []
        for (handle, type) in table.attributeTypes where !claimed.contains(handle) {
            rest.append(Descriptor(handle: handle, uuid: type))
        }
        orphanAttributes = rest.sorted { $0.handle < $1.handle }
    }
}
