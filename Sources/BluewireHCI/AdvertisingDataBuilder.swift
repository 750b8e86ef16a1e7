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
        // The element's structures are written after the bytes already there and checked there;
        // if they are too long or do not fit they are cut off again. One buffer and no
        // intermediate arrays: this is all of the advertising code a firmware image carries.
        let start = bytes.count
        var firstType: ADType?
        var tooLong: (type: ADType, length: Int)?
        func structure(_ type: ADType, _ body: (inout [UInt8]) -> Void) {
            let lengthAt = bytes.count
            bytes.append(0)
            bytes.append(type.rawValue)
            body(&bytes)
            let length = bytes.count - lengthAt - 2
            if firstType == nil { firstType = type }
            if length > 254 {
                if tooLong == nil { tooLong = (type, length) }
            } else {
                bytes[lengthAt] = UInt8(length + 1)
            }
        }
        switch element {
        case .flags(let f): structure(.flags) { $0.append(f.rawValue) }
        case .serviceUUIDs(let uuids, let complete):
            // One list per size, each UUID in its shortest form.
            let has16 = uuids.contains { $0.uint16 != nil }
            let has32 = uuids.contains { $0.uint16 == nil && $0.uint32 != nil }
            let has128 = uuids.contains { $0.uint16 == nil && $0.uint32 == nil }
            if has16 {
                structure(complete ? .completeList16BitServiceUUIDs : .incompleteList16BitServiceUUIDs) { out in
                    for uuid in uuids { if let short = uuid.uint16 { Self.le16(short, into: &out) } }
                }
            }
            if has32 {
                structure(complete ? .completeList32BitServiceUUIDs : .incompleteList32BitServiceUUIDs) { out in
                    for uuid in uuids where uuid.uint16 == nil { if let mid = uuid.uint32 { Self.le32(mid, into: &out) } }
                }
            }
            if has128 {
                structure(complete ? .completeList128BitServiceUUIDs : .incompleteList128BitServiceUUIDs) { out in
                    for uuid in uuids where uuid.uint16 == nil && uuid.uint32 == nil { out.append(contentsOf: uuid.bytes128) }
                }
            }
        case .completeLocalName(let name): structure(.completeLocalName) { Self.appendUTF8(of: name, to: &$0) }
        case .shortenedLocalName(let name): structure(.shortenedLocalName) { Self.appendUTF8(of: name, to: &$0) }
        case .txPowerLevel(let p): structure(.txPowerLevel) { $0.append(UInt8(bitPattern: p)) }
        case .appearance(let a): structure(.appearance) { Self.le16(a, into: &$0) }
        case .manufacturerSpecificData(let company, let data):
            structure(.manufacturerSpecificData) { Self.le16(company, into: &$0); $0.append(contentsOf: data) }
        case .serviceData(let uuid, let data):
            if let short = uuid.uint16 {
                structure(.serviceData16BitUUID) { Self.le16(short, into: &$0); $0.append(contentsOf: data) }
            } else if let mid = uuid.uint32 {
                structure(.serviceData32BitUUID) { Self.le32(mid, into: &$0); $0.append(contentsOf: data) }
            } else {
                structure(.serviceData128BitUUID) { $0.append(contentsOf: uuid.bytes128); $0.append(contentsOf: data) }
            }
        case .peripheralConnectionIntervalRange(let lo, let hi):
            structure(.peripheralConnectionIntervalRange) { Self.le16(lo, into: &$0); Self.le16(hi, into: &$0) }
        case .uri(let data): structure(.uri) { $0.append(contentsOf: data) }
        case .leRole(let role): structure(.leRole) { $0.append(role) }
        case .raw(let type, let data): structure(type) { $0.append(contentsOf: data) }
        }
        let needed = bytes.count - start
        let available = maxLength - start
        if let tooLong {
            bytes.removeSubrange(start...)
            throw .structureTooLong(type: tooLong.type, dataLength: tooLong.length)
        }
        guard needed <= available else {
            bytes.removeSubrange(start...)
            throw .doesNotFit(type: firstType ?? .flags, needed: needed, available: available)
        }
    }

    /// A name's UTF-8 octets. Embedded Swift copies them from the String's contiguous storage, which a
    /// native String always has: `Array(name.utf8)` would link the UTF-8 view's index machinery for
    /// bridged (foreign) strings, about 5 KB of flash that an image never runs.
    private static func appendUTF8(of name: String, to bytes: inout [UInt8]) {
        #if hasFeature(Embedded)
        _ = name.utf8.withContiguousStorageIfAvailable { bytes.append(contentsOf: $0) }
        #else
        bytes.append(contentsOf: name.utf8)
        #endif
    }

    private static func le16(_ v: UInt16, into bytes: inout [UInt8]) {
        bytes.append(UInt8(truncatingIfNeeded: v))
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
    }

    private static func le32(_ v: UInt32, into bytes: inout [UInt8]) {
        le16(UInt16(truncatingIfNeeded: v), into: &bytes)
        le16(UInt16(truncatingIfNeeded: v >> 16), into: &bytes)
    }
}
