import BluewireCore

/// Builds a `GATTDatabase` service by service, assigning handles in order (Core Vol 3 Part G §3).
///
/// ```swift
/// var builder = GATTDatabaseBuilder()
/// try builder.addService(.genericAccess)
/// try builder.addCharacteristic(.deviceName, properties: [.read], permissions: [.read], value: .cached(name))
/// let battery = try builder.addService(BluetoothUUID(0x180F))
/// let level = try builder.addCharacteristic(BluetoothUUID(0x2A19), properties: [.read, .notify],
///                                          permissions: [.read], value: .cached([100]))
/// let database = builder.build()   // level.valueHandle is what `GATTServer.notify` takes
/// ```
///
/// A cached value is fixed by the application and read-only to centrals: a characteristic value or
/// descriptor added with write permission and a `.cached` value is stored as a dynamic value the
/// server keeps (`GATTDynamicValue.stored`, `GATTAttributeValue.writable`), which centrals may write
/// and whose writes the application sees. (A database made with `GATTDatabase(attributes:)` keeps
/// what it is given: a cached value there answers a write with Write Not Permitted.)
///
/// A service is closed by the next `addService`; only closed services can be included, which is why
/// secondary services are usually added first. A characteristic with Notify or Indicate gets its Client
/// Characteristic Configuration descriptor right after its value (§3.3.3.3).
public struct GATTDatabaseBuilder: Sendable {
    var attributes: [GATTAttribute] = []
    /// The next handle to assign (Int so that running past 0xFFFF is detected, not wrapped).
    var nextHandle: Int
    var services: [GATTServiceReference] = []
    var openServiceIndex: Int? = nil
    var openServiceHasCharacteristic = false
    var openCharacteristic = false

    /// A builder whose first attribute gets `firstHandle`.
    public init(firstHandle: UInt16 = 1) {
        nextHandle = max(1, Int(firstHandle))
    }

    /// The handle the next attribute will get.
    public var nextAvailableHandle: UInt16? { nextHandle <= 0xFFFF ? UInt16(nextHandle) : nil }

    /// Leaves the handles before `handle` unused, so the next attribute gets `handle` (a gap, as real
    /// devices often have between services).
    public mutating func skipHandles(to handle: UInt16) throws(GATTDatabaseError) {
        guard Int(handle) >= nextHandle else { throw .handleNotAscending(handle) }
        nextHandle = Int(handle)
    }

    mutating func append(
        _ type: BluetoothUUID, _ permissions: AttributePermissions, _ value: GATTAttributeValue
    ) throws(GATTDatabaseError) -> UInt16 {
        guard nextHandle <= 0xFFFF else { throw .outOfHandles }
        let handle = UInt16(nextHandle)
        if case .cached(let bytes) = value, bytes.count > maximumAttributeValueLength {
            throw .valueTooLong(handle: handle, length: bytes.count)
        }
        attributes.append(GATTAttribute(handle: handle, type: type, permissions: permissions, value: value))
        nextHandle += 1
        if let open = openServiceIndex { services[open].endHandle = handle }
        return handle
    }

    /// Starts a service: a Primary or Secondary Service declaration whose value is the service UUID
    /// (Part G §3.1). Closes the previous service.
    @discardableResult
    public mutating func addService(
        _ uuid: BluetoothUUID, kind: GATTServiceKind = .primary
    ) throws(GATTDatabaseError) -> GATTServiceReference {
        openServiceIndex = nil
        let handle = try append(kind == .primary ? .primaryService : .secondaryService, [.read], .cached(uuid.attBytes))
        let reference = GATTServiceReference(uuid: uuid, kind: kind, startHandle: handle, endHandle: handle)
        services.append(reference)
        openServiceIndex = services.count - 1
        openServiceHasCharacteristic = false
        openCharacteristic = false
        return reference
    }

    /// Adds an Include declaration for a closed service of this builder (Part G §3.2): its value is the
    /// included service's handle range and, for a 16-bit UUID only, the UUID.
    @discardableResult
    public mutating func addIncludedService(_ service: GATTServiceReference) throws(GATTDatabaseError) -> UInt16 {
        guard let open = openServiceIndex else { throw .noServiceOpen }
        guard !openServiceHasCharacteristic else { throw .includeAfterCharacteristic }
        guard let included = services.firstIndex(where: { $0.startHandle == service.startHandle }),
              included != open else {
            throw .serviceNotIncludable(startHandle: service.startHandle)
        }
        let target = services[included]
        var value: [UInt8] = []
        value.append(UInt8(truncatingIfNeeded: target.startHandle))
        value.append(UInt8(truncatingIfNeeded: target.startHandle >> 8))
        value.append(UInt8(truncatingIfNeeded: target.endHandle))
        value.append(UInt8(truncatingIfNeeded: target.endHandle >> 8))
        if let short = target.uuid.uint16 {
            value.append(UInt8(truncatingIfNeeded: short))
            value.append(UInt8(truncatingIfNeeded: short >> 8))
        }
        return try append(.include, [.read], .cached(value))
    }

    /// Adds a characteristic: its declaration (properties, value handle, UUID, Part G §3.3.1), its value
    /// attribute, and for Notify/Indicate a Client Characteristic Configuration descriptor.
    @discardableResult
    public mutating func addCharacteristic(
        _ uuid: BluetoothUUID,
        properties: CharacteristicProperties,
        permissions: AttributePermissions,
        value: GATTAttributeValue,
        clientConfigurationPermissions: AttributePermissions = [.read, .write]
    ) throws(GATTDatabaseError) -> GATTCharacteristicHandles {
        guard openServiceIndex != nil else { throw .noServiceOpen }
        guard nextHandle < 0xFFFF else { throw .outOfHandles }
        // Checked before anything is appended so a refused characteristic leaves no orphan declaration.
        if let bytes = GATTAttribute(handle: 1, type: uuid, permissions: [], value: value).cachedValue,
           bytes.count > maximumAttributeValueLength {
            throw .valueTooLong(handle: UInt16(nextHandle + 1), length: bytes.count)
        }
        if properties.needsClientConfiguration && nextHandle + 2 > 0xFFFF { throw .outOfHandles }
        let declaration = CharacteristicDeclaration(properties: properties, valueHandle: UInt16(nextHandle + 1), uuid: uuid)
        let declarationHandle = try append(.characteristic, [.read], .cached(declaration.value))
        let valueHandle = try append(uuid, permissions, value.writable(permissions, type: uuid))
        var configuration: UInt16? = nil
        if properties.needsClientConfiguration {
            configuration = try append(.clientCharacteristicConfiguration, clientConfigurationPermissions, .cached([0, 0]))
        }
        openServiceHasCharacteristic = true
        openCharacteristic = true
        return GATTCharacteristicHandles(
            declarationHandle: declarationHandle, valueHandle: valueHandle, clientConfigurationHandle: configuration
        )
    }

    /// Adds a descriptor to the last characteristic (Part G §3.3.3).
    @discardableResult
    public mutating func addDescriptor(
        _ uuid: BluetoothUUID, permissions: AttributePermissions, value: GATTAttributeValue
    ) throws(GATTDatabaseError) -> UInt16 {
        guard openServiceIndex != nil, openCharacteristic else { throw .noCharacteristicOpen }
        return try append(uuid, permissions, value.writable(permissions, type: uuid))
    }

    /// The services added so far, with their current handle ranges.
    public var addedServices: [GATTServiceReference] { services }

    /// The database built so far.
    public func build() -> GATTDatabase {
        // Handles were assigned strictly ascending and values checked as they were added.
        (try? GATTDatabase(attributes: attributes)) ?? GATTDatabase()
    }
}

/// Primary or secondary (Core Vol 3 Part G §2.4, §3.1).
public enum GATTServiceKind: Hashable, Sendable {
    case primary
    case secondary
}

/// A service added to a builder: where it is, so it can be included or found again.
public struct GATTServiceReference: Hashable, Sendable {
    public var uuid: BluetoothUUID
    public var kind: GATTServiceKind
    /// Handle of the service declaration.
    public var startHandle: UInt16
    /// Handle of the last attribute of the service so far.
    public var endHandle: UInt16
}

/// The handles a new characteristic got.
public struct GATTCharacteristicHandles: Hashable, Sendable {
    public var declarationHandle: UInt16
    /// Pass this to `GATTServer.notify` / `indicate`.
    public var valueHandle: UInt16
    public var clientConfigurationHandle: UInt16?
}
