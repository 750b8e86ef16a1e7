import BluewireCore

/// A view of advertising or scan response data as AD structures (Core Vol 3 Part C §11,
/// Core Specification Supplement Part A).
///
/// Each structure is a Length octet, then Length octets of AD type and data. A Length of zero ends
/// the significant part early (the rest is padding, not an error). A Length running past the end is
/// malformed: iteration stops there, the structures before it are kept, and `error` reports the
/// offending Length octet. Iterating allocates nothing: structures are slices of `bytes`.
public struct AdvertisingData: Hashable, Sendable, Sequence {
    public var bytes: ArraySlice<UInt8>

    @inlinable public init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }
    @inlinable public init(_ bytes: [UInt8]) { self.bytes = bytes[...] }

    /// Walks the structures; stops at the end, at a zero Length, or at a malformed Length (see `error`).
    public struct Iterator: IteratorProtocol {
        @usableFromInline let bytes: ArraySlice<UInt8>
        @usableFromInline var index: Int
        @usableFromInline var _error: DecodeError?
        /// Set when a structure overran the data.
        @inlinable public var error: DecodeError? { _error }

        @inlinable init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            self.index = bytes.startIndex
            self._error = nil
        }

        @inlinable @inline(__always)
        public mutating func next() -> ADStructure? {
            guard index < bytes.endIndex else { return nil }
            let length = Int(bytes[index])
            if length == 0 {
                index = bytes.endIndex
                return nil
            }
            let available = bytes.endIndex - index - 1
            guard length <= available else {
                _error = DecodeError(
                    .truncated(needed: length, available: available), layer: "hci", field: "AD_Length",
                    offset: index - bytes.startIndex)
                index = bytes.endIndex
                return nil
            }
            let type = ADType(bytes[index + 1])
            let data = bytes[(index + 2)..<(index + 1 + length)]
            index += 1 + length
            return ADStructure(type: type, data: data)
        }
    }

    @inlinable @inline(__always) public func makeIterator() -> Iterator { Iterator(bytes: bytes) }

    /// The malformed structure that ended iteration, if any (offset from the start of the data).
    @inlinable
    public var error: DecodeError? {
        var iterator = makeIterator()
        while iterator.next() != nil {}
        return iterator.error
    }

    /// The first structure of `type`.
    @inlinable
    public func first(_ type: ADType) -> ADStructure? {
        for structure in self where structure.type == type { return structure }
        return nil
    }

    // MARK: typed accessors (first occurrence wins, as the Supplement allows each type once)

    public var flags: ADFlags? {
        if case .flags(let f)? = first(.flags)?.value { return f }
        return nil
    }

    /// The local name, complete if present, else shortened; invalid UTF-8 is repaired.
    public var localName: String? {
        if let s = first(.completeLocalName) ?? first(.shortenedLocalName) {
            return String(decoding: s.data, as: UTF8.self)
        }
        return nil
    }

    /// Whether `localName` came from a Complete Local Name structure.
    public var hasCompleteLocalName: Bool { first(.completeLocalName) != nil }

    public var txPowerLevel: Int8? {
        if case .txPowerLevel(let p)? = first(.txPowerLevel)?.value { return p }
        return nil
    }

    public var appearance: UInt16? {
        if case .appearance(let a)? = first(.appearance)?.value { return a }
        return nil
    }

    public var peripheralConnectionIntervalRange: (min: UInt16, max: UInt16)? {
        if case .peripheralConnectionIntervalRange(let lo, let hi)? = first(.peripheralConnectionIntervalRange)?.value {
            return (lo, hi)
        }
        return nil
    }

    public var uri: ArraySlice<UInt8>? { first(.uri)?.data }

    public var leRole: UInt8? {
        if case .leRole(let r)? = first(.leRole)?.value { return r }
        return nil
    }

    /// The first Manufacturer Specific Data structure.
    public var manufacturerSpecificData: (companyIdentifier: UInt16, data: ArraySlice<UInt8>)? {
        for s in self {
            if case .manufacturerSpecificData(let company, let data) = s.value { return (company, data) }
        }
        return nil
    }

    /// Every service UUID in the 16/32/128-bit lists, complete or not, in order (allocates the array).
    public var serviceUUIDs: [BluetoothUUID] {
        var out: [BluetoothUUID] = []
        for s in self {
            if case .serviceUUIDs(let list, _) = s.value { out.append(contentsOf: list) }
        }
        return out
    }

    /// Whether `uuid` appears in any service UUID list (no allocation).
    @inlinable
    public func containsServiceUUID(_ uuid: BluetoothUUID) -> Bool {
        for s in self {
            if case .serviceUUIDs(let list, _) = s.value {
                for candidate in list where candidate == uuid { return true }
            }
        }
        return false
    }

    /// Every Service Data structure (16/32/128-bit) as UUID and data (allocates the array).
    public var serviceData: [(uuid: BluetoothUUID, data: ArraySlice<UInt8>)] {
        var out: [(uuid: BluetoothUUID, data: ArraySlice<UInt8>)] = []
        for s in self {
            if case .serviceData(let uuid, let data) = s.value { out.append((uuid, data)) }
        }
        return out
    }
}
