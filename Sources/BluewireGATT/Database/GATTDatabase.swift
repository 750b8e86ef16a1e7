import BluewireCore

/// A GATT server's attribute table, ordered by handle, with the characteristic structure found in it.
///
/// Build one with `GATTDatabaseBuilder` (handles assigned in order), from explicit attributes (handles
/// kept exactly, e.g. a table recorded from a real device), or from a JSON database file
/// (`GATTDatabase(json:)`). Lookups by handle are binary searches; nothing is allocated per request.
public struct GATTDatabase: Sendable {
    /// Every attribute, in strictly ascending handle order.
    public internal(set) var attributes: [GATTAttribute]
    /// The characteristics found from their declarations, in handle order.
    public private(set) var characteristics: [GATTCharacteristicInfo]
    var characteristicByValueHandle: HandleIndex
    var characteristicByConfigurationHandle: HandleIndex

    /// A database holding `attributes` with their handles kept exactly.
    ///
    /// Throws unless handles are non-zero and strictly ascending and cached values fit in 512 bytes.
    public init(attributes: [GATTAttribute]) throws(GATTDatabaseError) {
        var previous: UInt16 = 0
        for attribute in attributes {
            guard attribute.handle != 0 else { throw .reservedHandle }
            guard attribute.handle > previous else { throw .handleNotAscending(attribute.handle) }
            previous = attribute.handle
            if let bytes = attribute.cachedValue, bytes.count > maximumAttributeValueLength {
                throw .valueTooLong(handle: attribute.handle, length: bytes.count)
            }
        }
        self.attributes = attributes
        self.characteristics = []
        self.characteristicByValueHandle = HandleIndex()
        self.characteristicByConfigurationHandle = HandleIndex()
        indexCharacteristics()
    }

    /// An empty database.
    public init() {
        attributes = []
        characteristics = []
        characteristicByValueHandle = HandleIndex()
        characteristicByConfigurationHandle = HandleIndex()
    }

    /// Finds characteristic declarations and their Client Characteristic Configuration descriptors.
    ///
    /// A declaration whose value is malformed (a recorded table may hold anything) is skipped rather than
    /// rejected: the server still serves it byte for byte, it just cannot notify through it.
    mutating func indexCharacteristics() {
        characteristics = []
        characteristicByValueHandle = HandleIndex()
        characteristicByConfigurationHandle = HandleIndex()
        var i = 0
        while i < attributes.count {
            defer { i += 1 }
            let attribute = attributes[i]
            guard attribute.type == .characteristic, let value = attribute.cachedValue,
                  let declaration = CharacteristicDeclaration(value: value[...]) else { continue }
            var end = attributes.count
            var j = i + 1
            while j < attributes.count {
                let type = attributes[j].type
                if type == .characteristic || type == .primaryService || type == .secondaryService
                    || type == .include {
                    end = j
                    break
                }
                j += 1
            }
            let endHandle = attributes[end - 1].handle
            var configuration: UInt16? = nil
            for k in (i + 1)..<end
            where attributes[k].type == .clientCharacteristicConfiguration && attributes[k].handle > declaration.valueHandle {
                configuration = attributes[k].handle
                break
            }
            let info = GATTCharacteristicInfo(
                declarationHandle: attribute.handle, properties: declaration.properties,
                valueHandle: declaration.valueHandle, uuid: declaration.uuid, endHandle: endHandle,
                clientConfigurationHandle: configuration
            )
            if characteristicByValueHandle[declaration.valueHandle] == nil {
                characteristicByValueHandle.set(characteristics.count, for: declaration.valueHandle)
            }
            if let configuration { characteristicByConfigurationHandle.set(characteristics.count, for: configuration) }
            characteristics.append(info)
        }
    }

    /// The index in `attributes` of `handle`, if present.
    @inlinable
    public func index(of handle: UInt16) -> Int? {
        let i = firstIndex(atOrAfter: handle)
        return i < attributes.count && attributes[i].handle == handle ? i : nil
    }

    /// The index of the first attribute whose handle is at least `handle` (`attributes.count` if none).
    @inlinable
    public func firstIndex(atOrAfter handle: UInt16) -> Int {
        var low = 0
        var high = attributes.count
        while low < high {
            let mid = (low + high) / 2
            if attributes[mid].handle < handle { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The attribute with `handle`, if present.
    @inlinable
    public subscript(handle handle: UInt16) -> GATTAttribute? {
        guard let i = index(of: handle) else { return nil }
        return attributes[i]
    }

    /// The last handle of the group that the grouping attribute at `index` starts: the handle before the
    /// next service declaration, or the last handle of the table (Core Vol 3 Part G §2.5.3).
    @inlinable
    public func groupEndHandle(ofServiceAt index: Int) -> UInt16 {
        var j = index + 1
        while j < attributes.count {
            if attributes[j].isServiceDeclaration { return attributes[j - 1].handle }
            j += 1
        }
        return attributes[attributes.count - 1].handle
    }

    /// The characteristic whose value has `handle`.
    public func characteristic(valueHandle handle: UInt16) -> GATTCharacteristicInfo? {
        guard let i = characteristicByValueHandle[handle] else { return nil }
        return characteristics[i]
    }

    /// The characteristic configured by the Client Characteristic Configuration descriptor at `handle`.
    public func characteristic(clientConfigurationHandle handle: UInt16) -> GATTCharacteristicInfo? {
        guard let i = characteristicByConfigurationHandle[handle] else { return nil }
        return characteristics[i]
    }

    /// Replaces a cached value, or a dynamic value the server keeps (e.g. a new sensor reading that
    /// later reads will return).
    /// - Throws: `.valueIsDynamic` for a value the application's handlers produce.
    public mutating func setValue(_ bytes: [UInt8], for handle: UInt16) throws(GATTDatabaseError) {
        guard let i = index(of: handle) else { throw .noSuchHandle(handle) }
        guard bytes.count <= maximumAttributeValueLength else {
            throw .valueTooLong(handle: handle, length: bytes.count)
        }
        switch attributes[i].value {
        case .cached:
            attributes[i].value = .cached(bytes)
        case .dynamic(var dynamic):
            guard dynamic.stored != nil else { throw .valueIsDynamic(handle) }
            dynamic.stored = bytes
            attributes[i].value = .dynamic(dynamic)
        }
        if attributes[i].type == .characteristic { indexCharacteristics() }
    }

    /// Stores a value the server keeps after a client's write the server has already validated.
    mutating func replaceStoredValue(_ bytes: [UInt8], at index: Int) {
        guard case .dynamic(var dynamic) = attributes[index].value else { return }
        dynamic.stored = bytes
        attributes[index].value = .dynamic(dynamic)
    }

    /// Replaces an attribute's value source (cached bytes or handlers).
    public mutating func setValue(_ value: GATTAttributeValue, for handle: UInt16) throws(GATTDatabaseError) {
        guard let i = index(of: handle) else { throw .noSuchHandle(handle) }
        if let bytes = GATTAttribute(handle: handle, type: attributes[i].type, permissions: [], value: value).cachedValue,
           bytes.count > maximumAttributeValueLength {
            throw .valueTooLong(handle: handle, length: bytes.count)
        }
        attributes[i].value = value
        if attributes[i].type == .characteristic { indexCharacteristics() }
    }
}

/// A characteristic as its declaration describes it (Core Vol 3 Part G §3.3).
public struct GATTCharacteristicInfo: Hashable, Sendable {
    /// Handle of the characteristic declaration (type 0x2803).
    public var declarationHandle: UInt16
    /// The properties byte of the declaration.
    public var properties: CharacteristicProperties
    /// Handle of the characteristic value attribute.
    public var valueHandle: UInt16
    /// The characteristic UUID.
    public var uuid: BluetoothUUID
    /// The last handle of the characteristic definition (its last descriptor).
    public var endHandle: UInt16
    /// Handle of its Client Characteristic Configuration descriptor, if it has one.
    public var clientConfigurationHandle: UInt16?
}

/// The value of a characteristic declaration: properties, value handle, UUID (Core Vol 3 Part G §3.3.1).
public struct CharacteristicDeclaration: Hashable, Sendable {
    public var properties: CharacteristicProperties
    public var valueHandle: UInt16
    public var uuid: BluetoothUUID

    @inlinable
    public init(properties: CharacteristicProperties, valueHandle: UInt16, uuid: BluetoothUUID) {
        self.properties = properties
        self.valueHandle = valueHandle
        self.uuid = uuid
    }

    /// Decodes a declaration value of 5 (16-bit UUID) or 19 (128-bit UUID) bytes; nil otherwise.
    @inlinable
    public init?(value: ArraySlice<UInt8>) {
        guard value.count == 5 || value.count == 19 else { return nil }
        let s = value.startIndex
        guard let uuid = BluetoothUUID(littleEndian: value[(s + 3)...]) else { return nil }
        self.init(
            properties: CharacteristicProperties(rawValue: value[s]),
            valueHandle: UInt16(value[s + 1]) | UInt16(value[s + 2]) << 8,
            uuid: uuid
        )
    }

    /// The declaration value bytes: properties, value handle (little-endian), UUID in ATT form.
    @inlinable
    public var value: [UInt8] {
        var out: [UInt8] = [properties.rawValue, UInt8(truncatingIfNeeded: valueHandle), UInt8(truncatingIfNeeded: valueHandle >> 8)]
        out.append(contentsOf: uuid.attBytes)
        return out
    }
}
