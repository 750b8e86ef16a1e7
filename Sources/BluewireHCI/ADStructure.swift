import BluewireCore

/// One AD structure (Core Vol 3 Part C §11): a type and its data, sliced from the advertising data.
public struct ADStructure: Hashable, Sendable {
    public var type: ADType
    public var data: ArraySlice<UInt8>

    @inlinable
    public init(type: ADType, data: ArraySlice<UInt8>) {
        self.type = type
        self.data = data
    }

    /// The data interpreted by type (Core Supplement Part A §1). Data of the wrong size for a known
    /// type gives `.malformed`, never a trap.
    @inlinable @inline(__always)
    public var value: ADValue {
        let d = data
        // Matched on the raw octet, not on `ADType`'s static constants: in another module each
        // constant is an accessor call and a comparison per case, while literals make a jump table.
        switch type.rawValue {
        case 0x01:  // Flags
            guard let first = d.first else { return .malformed(type, d) }
            return .flags(ADFlags(rawValue: first))
        case 0x02, 0x03:  // Incomplete, Complete List of 16-bit Service UUIDs
            return uuidList(width: 2, complete: type.rawValue == 0x03)
        case 0x04, 0x05:  // 32-bit
            return uuidList(width: 4, complete: type.rawValue == 0x05)
        case 0x06, 0x07:  // 128-bit
            return uuidList(width: 16, complete: type.rawValue == 0x07)
        case 0x08: return .localName(d, complete: false)  // Shortened Local Name
        case 0x09: return .localName(d, complete: true)  // Complete Local Name
        case 0x0A:  // Tx Power Level
            guard d.count == 1, let first = d.first else { return .malformed(type, d) }
            return .txPowerLevel(Int8(bitPattern: first))
        case 0x19:  // Appearance
            guard d.count == 2 else { return .malformed(type, d) }
            return .appearance(UInt16(d[d.startIndex]) | UInt16(d[d.startIndex + 1]) << 8)
        case 0xFF:  // Manufacturer Specific Data
            guard d.count >= 2 else { return .malformed(type, d) }
            let company = UInt16(d[d.startIndex]) | UInt16(d[d.startIndex + 1]) << 8
            return .manufacturerSpecificData(companyIdentifier: company, data: d.dropFirst(2))
        case 0x16: return serviceData(width: 2)  // Service Data - 16-bit UUID
        case 0x20: return serviceData(width: 4)  // 32-bit
        case 0x21: return serviceData(width: 16)  // 128-bit
        case 0x12:  // Peripheral Connection Interval Range
            guard d.count == 4 else { return .malformed(type, d) }
            let s = d.startIndex
            return .peripheralConnectionIntervalRange(
                min: UInt16(d[s]) | UInt16(d[s + 1]) << 8, max: UInt16(d[s + 2]) | UInt16(d[s + 3]) << 8)
        case 0x24: return .uri(d)  // URI
        case 0x1C:  // LE Role
            guard d.count == 1, let first = d.first else { return .malformed(type, d) }
            return .leRole(first)
        default: return .other(type, d)
        }
    }

    @inlinable @inline(__always)
    func uuidList(width: Int, complete: Bool) -> ADValue {
        guard data.count % width == 0 else { return .malformed(type, data) }
        return .serviceUUIDs(ADUUIDList(width: width, bytes: data), complete: complete)
    }

    @inlinable @inline(__always)
    func serviceData(width: Int) -> ADValue {
        guard data.count >= width,
            let uuid = BluetoothUUID(littleEndian: data.prefix(width))
        else { return .malformed(type, data) }
        return .serviceData(uuid: uuid, data: data.dropFirst(width))
    }
}

/// The typed content of an AD structure. Slices share the advertising data's storage.
public enum ADValue: Hashable, Sendable {
    case flags(ADFlags)
    /// A 16-, 32- or 128-bit service UUID list; `complete` is false for the "incomplete" types.
    case serviceUUIDs(ADUUIDList, complete: Bool)
    /// UTF-8 name bytes; `complete` is false for Shortened Local Name.
    case localName(ArraySlice<UInt8>, complete: Bool)
    /// dBm.
    case txPowerLevel(Int8)
    /// Appearance value (Assigned Numbers §2.6).
    case appearance(UInt16)
    case manufacturerSpecificData(companyIdentifier: UInt16, data: ArraySlice<UInt8>)
    case serviceData(uuid: BluetoothUUID, data: ArraySlice<UInt8>)
    /// 1.25 ms units; 0xFFFF means no specific value.
    case peripheralConnectionIntervalRange(min: UInt16, max: UInt16)
    /// URI with its scheme coded as in Assigned Numbers §2.7 (first code point).
    case uri(ArraySlice<UInt8>)
    /// 0x00 peripheral only … 0x03 both, central preferred.
    case leRole(UInt8)
    /// A known type whose data has the wrong size.
    case malformed(ADType, ArraySlice<UInt8>)
    /// A type this decoder does not interpret, kept raw.
    case other(ADType, ArraySlice<UInt8>)
}

/// A list of same-width service UUIDs inside an AD structure, decoded lazily.
public struct ADUUIDList: Hashable, Sendable, Sequence {
    /// 2, 4 or 16 octets per UUID.
    public var width: Int
    public var bytes: ArraySlice<UInt8>

    @inlinable
    public init(width: Int, bytes: ArraySlice<UInt8>) {
        self.width = width
        self.bytes = bytes
    }

    /// Yields each UUID of the list in order.
    public struct Iterator: IteratorProtocol {
        @usableFromInline var rest: ArraySlice<UInt8>
        @usableFromInline let width: Int
        @inlinable init(rest: ArraySlice<UInt8>, width: Int) {
            self.rest = rest
            self.width = width
        }
        @inlinable @inline(__always)
        public mutating func next() -> BluetoothUUID? {
            guard width > 0, rest.count >= width else { return nil }
            let uuid = BluetoothUUID(littleEndian: rest.prefix(width))
            rest = rest.dropFirst(width)
            return uuid
        }
    }

    @inlinable @inline(__always) public func makeIterator() -> Iterator { Iterator(rest: bytes, width: width) }
    @inlinable public var underestimatedCount: Int { width > 0 ? bytes.count / width : 0 }
}
