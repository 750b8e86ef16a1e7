import BluewireCore

/// A typed AD structure to encode (Core Specification Supplement Part A §1).
public enum ADElement: Hashable, Sendable {
    case flags(ADFlags)
    /// Service UUIDs; the builder writes one list per size (16, 32, 128-bit), each UUID in its shortest form.
    case serviceUUIDs([BluetoothUUID], complete: Bool)
    case completeLocalName(String)
    case shortenedLocalName(String)
    case txPowerLevel(Int8)
    case appearance(UInt16)
    case manufacturerSpecificData(companyIdentifier: UInt16, data: [UInt8])
    /// Written as Service Data 16, 32 or 128-bit according to the UUID's shortest form.
    case serviceData(uuid: BluetoothUUID, data: [UInt8])
    case peripheralConnectionIntervalRange(min: UInt16, max: UInt16)
    case uri([UInt8])
    case leRole(UInt8)
    /// Any other type, written as given.
    case raw(type: ADType, data: [UInt8])
}

/// Why an AD structure could not be added.
public enum AdvertisingDataError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The structure needs `needed` octets but only `available` are left of the limit.
    case doesNotFit(type: ADType, needed: Int, available: Int)
    /// One AD structure holds at most 254 octets of data (its Length octet counts the type too).
    case structureTooLong(type: ADType, dataLength: Int)

    public var description: String {
        switch self {
        case .doesNotFit(let type, let needed, let available):
            "advertising data: \(type) needs \(needed) octets, \(available) left"
        case .structureTooLong(let type, let length):
            "advertising data: \(type) data of \(length) octets exceeds 254"
        }
    }
}

/// Encodes AD structures into advertising or scan response data within a size limit:
/// 31 octets for legacy advertising (Core Vol 6 Part B §2.3.1), or the controller's
/// LE Read Maximum Advertising Data Length (up to 1,650) for extended advertising.
///
/// An element that does not fit is refused whole with `AdvertisingDataError.doesNotFit`; what was
/// added before stays.
public struct AdvertisingDataBuilder: Hashable, Sendable {
    public static let legacyMaxLength = 31
    public static let extendedMaxLength = 1650

    public let maxLength: Int
    public private(set) var bytes: [UInt8]

    public init(maxLength: Int = AdvertisingDataBuilder.legacyMaxLength) {
        self.maxLength = maxLength
        bytes = []
    }

    /// Octets still free.
    public var remaining: Int { maxLength - bytes.count }

    /// Encodes `elements` in order into one buffer of at most `maxLength` octets.
    public static func encode(_ elements: [ADElement], maxLength: Int = legacyMaxLength) throws(AdvertisingDataError) -> [UInt8] {
        var builder = AdvertisingDataBuilder(maxLength: maxLength)
        for element in elements { try builder.append(element) }
        return builder.bytes
    }

    public mutating func append(_ element: ADElement) throws(AdvertisingDataError) {
        var pending: [(ADType, [UInt8])] = []
        switch element {
        case .flags(let f): pending.append((.flags, [f.rawValue]))
        case .serviceUUIDs(let uuids, let complete):
            var l16: [UInt8] = [], l32: [UInt8] = [], l128: [UInt8] = []
            for uuid in uuids {
                if let short = uuid.uint16 {
                    l16.append(UInt8(truncatingIfNeeded: short)); l16.append(UInt8(truncatingIfNeeded: short >> 8))
                } else if let mid = uuid.uint32 {
                    for i in 0..<4 { l32.append(UInt8(truncatingIfNeeded: mid >> (8 * UInt32(i)))) }
                } else {
                    l128.append(contentsOf: uuid.bytes128)
                }
            }
            if !l16.isEmpty { pending.append((complete ? .completeList16BitServiceUUIDs : .incompleteList16BitServiceUUIDs, l16)) }
            if !l32.isEmpty { pending.append((complete ? .completeList32BitServiceUUIDs : .incompleteList32BitServiceUUIDs, l32)) }
            if !l128.isEmpty { pending.append((complete ? .completeList128BitServiceUUIDs : .incompleteList128BitServiceUUIDs, l128)) }
        case .completeLocalName(let name): pending.append((.completeLocalName, Self.octets(of: name)))
        case .shortenedLocalName(let name): pending.append((.shortenedLocalName, Self.octets(of: name)))
        case .txPowerLevel(let p): pending.append((.txPowerLevel, [UInt8(bitPattern: p)]))
        case .appearance(let a): pending.append((.appearance, le16(a)))
        case .manufacturerSpecificData(let company, let data): pending.append((.manufacturerSpecificData, le16(company) + data))
        case .serviceData(let uuid, let data):
            if let short = uuid.uint16 {
                pending.append((.serviceData16BitUUID, le16(short) + data))
            } else if let mid = uuid.uint32 {
                pending.append((.serviceData32BitUUID, le16(UInt16(truncatingIfNeeded: mid)) + le16(UInt16(truncatingIfNeeded: mid >> 16)) + data))
            } else {
                pending.append((.serviceData128BitUUID, uuid.bytes128 + data))
            }
        case .peripheralConnectionIntervalRange(let lo, let hi): pending.append((.peripheralConnectionIntervalRange, le16(lo) + le16(hi)))
        case .uri(let data): pending.append((.uri, data))
        case .leRole(let role): pending.append((.leRole, [role]))
        case .raw(let type, let data): pending.append((type, data))
        }
        var needed = 0
        for (type, data) in pending {
            guard data.count <= 254 else { throw .structureTooLong(type: type, dataLength: data.count) }
            needed += 2 + data.count
        }
        guard needed <= remaining else {
            throw .doesNotFit(type: pending.first?.0 ?? .flags, needed: needed, available: remaining)
        }
        for (type, data) in pending {
            bytes.append(UInt8(data.count + 1))
            bytes.append(type.rawValue)
            bytes.append(contentsOf: data)
        }
    }

    /// A name's UTF-8 octets. Embedded Swift copies them from the String's contiguous storage, which a
    /// native String always has: `Array(name.utf8)` would link the UTF-8 view's index machinery for
    /// bridged (foreign) strings, about 5 KB of flash that an image never runs.
    private static func octets(of name: String) -> [UInt8] {
        #if hasFeature(Embedded)
        name.utf8.withContiguousStorageIfAvailable { Array($0) } ?? []
        #else
        Array(name.utf8)
        #endif
    }

    private func le16(_ v: UInt16) -> [UInt8] { [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)] }
}
