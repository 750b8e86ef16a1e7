/// A Bluetooth UUID, stored as its full 128 bits.
///
/// 16- and 32-bit UUIDs are aliases of `0000xxxx-0000-1000-8000-00805F9B34FB` (the Bluetooth Base UUID,
/// Core Vol 3 Part B §2.5.1). ATT carries 16-bit or 128-bit forms only; a 32-bit UUID must be sent as
/// 128 bits there (Core Vol 3 Part F §3.2.1). Advertising data may carry all three sizes.
public struct BluetoothUUID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Bits 127..64.
    public var high: UInt64
    /// Bits 63..0.
    public var low: UInt64

    /// The low 64 bits of the Base UUID, and the high bits other than the alias field.
    public static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB
    public static let baseHighLow32: UInt64 = 0x0000_1000

    @inlinable
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A 16-bit SIG-assigned UUID.
    @inlinable
    public init(_ value: UInt16) {
        self.init(high: UInt64(value) << 32 | BluetoothUUID.baseHighLow32, low: BluetoothUUID.baseLow)
    }

    /// A 32-bit SIG-assigned UUID.
    @inlinable
    public init(uint32 value: UInt32) {
        self.init(high: UInt64(value) << 32 | BluetoothUUID.baseHighLow32, low: BluetoothUUID.baseLow)
    }

    /// Decodes a little-endian UUID of 2, 4 or 16 bytes (the wire forms); nil for any other length.
    @inlinable
    public init?(littleEndian bytes: ArraySlice<UInt8>) {
        switch bytes.count {
        case 2:
            let s = bytes.startIndex
            self.init(UInt16(bytes[s]) | UInt16(bytes[s + 1]) << 8)
        case 4:
            var v: UInt32 = 0
            for (i, b) in bytes.enumerated() { v |= UInt32(b) << (8 * UInt32(i)) }
            self.init(uint32: v)
        case 16:
            var lo: UInt64 = 0
            var hi: UInt64 = 0
            for (i, b) in bytes.enumerated() {
                if i < 8 { lo |= UInt64(b) << (8 * UInt64(i)) } else { hi |= UInt64(b) << (8 * UInt64(i - 8)) }
            }
            self.init(high: hi, low: lo)
        default:
            return nil
        }
    }

    /// Whether this UUID is an alias built on the Base UUID.
    @inlinable
    public var isBased: Bool { low == BluetoothUUID.baseLow && (high & 0xFFFF_FFFF) == BluetoothUUID.baseHighLow32 }

    /// The 16-bit form, if this is a 16-bit alias.
    @inlinable
    public var uint16: UInt16? {
        guard isBased, high >> 48 == 0 else { return nil }
        return UInt16(truncatingIfNeeded: high >> 32)
    }

    /// The 32-bit form, if this is a 16- or 32-bit alias.
    @inlinable
    public var uint32: UInt32? {
        guard isBased else { return nil }
        return UInt32(truncatingIfNeeded: high >> 32)
    }

    /// The shortest size this UUID can be sent as in ATT: 2 or 16 bytes.
    @inlinable
    public var attSize: Int { uint16 != nil ? 2 : 16 }

    /// Little-endian bytes in the ATT form: 2 bytes for 16-bit aliases, else 16.
    @inlinable
    public var attBytes: [UInt8] {
        if let short = uint16 { return [UInt8(truncatingIfNeeded: short), UInt8(truncatingIfNeeded: short >> 8)] }
        return bytes128
    }

    /// The full 16 little-endian bytes.
    @inlinable
    public var bytes128: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(16)
        for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: low >> (8 * UInt64(i)))) }
        for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: high >> (8 * UInt64(i)))) }
        return out
    }

    /// Parses `0x2A00`, `2a00`, `0x0000180F` (32-bit) or `0000180f-0000-1000-8000-00805f9b34fb`.
    public init?(parsing text: String) {
        var body = Substring(text)
        if body.hasPrefix("0x") || body.hasPrefix("0X") { body = body.dropFirst(2) }
        let digits = body.filter { $0 != "-" }
        switch digits.count {
        case 4:
            guard let v = UInt16(digits, radix: 16) else { return nil }
            self.init(v)
        case 8:
            guard let v = UInt32(digits, radix: 16) else { return nil }
            self.init(uint32: v)
        case 32:
            guard body.count == 32 || body.count == 36 else { return nil }
            let hiText = digits.prefix(16)
            let loText = digits.suffix(16)
            guard let hi = UInt64(hiText, radix: 16), let lo = UInt64(loText, radix: 16) else { return nil }
            self.init(high: hi, low: lo)
        default:
            return nil
        }
    }

    /// The canonical 36-character form, upper case.
    /// Written digit by digit: no `Array(String)` (grapheme breaking) or `uppercased()` (case
    /// mappings), whose Unicode tables an Embedded Swift image would otherwise link.
    public var uuidString: String {
        String(unsafeUninitializedCapacity: 36) { buffer in
            var i = 0
            for nibble in 0..<32 {
                if nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20 {
                    buffer[i] = 0x2D  // "-"
                    i += 1
                }
                let word = nibble < 16 ? high : low
                let shift = UInt64(60 - 4 * (nibble % 16))
                buffer[i] = hexDigit(UInt8(truncatingIfNeeded: (word >> shift) & 0xF), upper: true)
                i += 1
            }
            return i
        }
    }

    /// `0x2A00` for 16-bit aliases, `0x0000FE95`-style for 32-bit, else the 36-character form.
    public var shortString: String {
        if let short = uint16 { return "0x" + upperHex(UInt64(short), width: 4) }
        if let long = uint32 { return "0x" + upperHex(UInt64(long), width: 8) }
        return uuidString
    }

    /// The SIG-assigned name, if known (services, characteristics, descriptors, declarations).
    public var name: String? {
        guard let short = uint16 else { return nil }
        return BluetoothUUID.assignedNames[short]
    }

    /// `0x2A00 (Device Name)` or just the short form when no name is known.
    public var description: String {
        if let name { return shortString + " (" + name + ")" }
        return shortString
    }

    public static func < (lhs: BluetoothUUID, rhs: BluetoothUUID) -> Bool {
        lhs.high != rhs.high ? lhs.high < rhs.high : lhs.low < rhs.low
    }
}

extension BluetoothUUID {
    // GATT declarations and descriptors (Core Vol 3 Part G §3).
    public static let primaryService = BluetoothUUID(0x2800)
    public static let secondaryService = BluetoothUUID(0x2801)
    public static let include = BluetoothUUID(0x2802)
    public static let characteristic = BluetoothUUID(0x2803)
    public static let characteristicExtendedProperties = BluetoothUUID(0x2900)
    public static let characteristicUserDescription = BluetoothUUID(0x2901)
    public static let clientCharacteristicConfiguration = BluetoothUUID(0x2902)
    public static let serverCharacteristicConfiguration = BluetoothUUID(0x2903)
    public static let characteristicPresentationFormat = BluetoothUUID(0x2904)
    public static let genericAccess = BluetoothUUID(0x1800)
    public static let genericAttribute = BluetoothUUID(0x1801)
    public static let deviceName = BluetoothUUID(0x2A00)
    public static let appearance = BluetoothUUID(0x2A01)
    public static let serviceChanged = BluetoothUUID(0x2A05)
    /// Client Supported Features (Core Vol 3 Part G §7.2): what a client supports, written per client.
    public static let clientSupportedFeatures = BluetoothUUID(0x2B29)
    /// Server Supported Features (Core Vol 3 Part G §7.4): what the server supports (bit 0: EATT).
    public static let serverSupportedFeatures = BluetoothUUID(0x2B3A)
}
