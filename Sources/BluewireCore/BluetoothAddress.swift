/// A 48-bit Bluetooth device address with its LE address type.
///
/// Text form is most-significant byte first, `AA:BB:CC:DD:EE:FF`, with `/random` appended for random
/// addresses (Core Vol 6 Part B §1.3). On the wire the six bytes are little-endian.
public struct BluetoothAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The LE address type as HCI encodes it (Core Vol 4 Part E §7.7.65.2, Peer_Address_Type).
    public enum AddressType: UInt8, Sendable, Hashable {
        case `public` = 0x00
        case random = 0x01
        /// A public identity address resolved by the controller.
        case publicIdentity = 0x02
        /// A random (static) identity address resolved by the controller.
        case randomIdentity = 0x03
        /// Anonymous advertisement (extended advertising, no address).
        case anonymous = 0xFF

        /// Whether the address is a random one (resolved or not).
        @inlinable public var isRandom: Bool { self == .random || self == .randomIdentity }

        /// Maps an HCI address-type byte; unknown values are kept as `.random` when bit 0 is set.
        @inlinable
        public init(hciValue: UInt8) {
            self = AddressType(rawValue: hciValue) ?? ((hciValue & 1) == 1 ? .random : .public)
        }
    }

    /// The kind of a random address, from its two most significant bits (Core Vol 6 Part B §1.3.2).
    public enum RandomKind: Sendable, Hashable {
        case nonResolvablePrivate, resolvablePrivate, reserved, `static`
    }

    /// The 48 address bits; bits 47..40 are the most significant byte.
    public var value: UInt64
    public var type: AddressType

    @inlinable
    public init(value: UInt64, type: AddressType = .public) {
        self.value = value & 0xFFFF_FFFF_FFFF
        self.type = type
    }

    /// Creates an address from its six bytes in text order (most significant first).
    @inlinable
    public init(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8, _ b4: UInt8, _ b5: UInt8, type: AddressType = .public) {
        var v: UInt64 = 0
        for byte in [b0, b1, b2, b3, b4, b5] { v = v << 8 | UInt64(byte) }
        self.init(value: v, type: type)
    }

    /// Parses `AA:BB:CC:DD:EE:FF` or `AA:BB:CC:DD:EE:FF/random` (also `/public`); nil if malformed.
    public init?(parsing text: String) {
        var body = Substring(text)
        var type = AddressType.public
        if let slash = body.firstIndex(of: "/") {
            let suffix = body[body.index(after: slash)...].lowercased()
            switch suffix {
            case "random": type = .random
            case "public": type = .public
            default: return nil
            }
            body = body[..<slash]
        }
        let parts = body.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var v: UInt64 = 0
        for part in parts {
            guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
            v = v << 8 | UInt64(byte)
        }
        self.init(value: v, type: type)
    }

    /// The six bytes in wire order (least significant first).
    @inlinable
    public var littleEndianBytes: [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    /// For random addresses, the sub-type from the top two bits.
    @inlinable
    public var randomKind: RandomKind? {
        guard type.isRandom else { return nil }
        switch value >> 46 {
        case 0b00: return .nonResolvablePrivate
        case 0b01: return .resolvablePrivate
        case 0b11: return .static
        default: return .reserved
        }
    }

    /// A random static address: the top two bits forced to 1 (Core Vol 6 Part B §1.3.2.1).
    @inlinable
    public static func randomStatic(_ bits: UInt64) -> BluetoothAddress {
        BluetoothAddress(value: bits | 0xC000_0000_0000, type: .random)
    }

    /// `AA:BB:CC:DD:EE:FF` without the type suffix.
    public var hexString: String {
        var out = ""
        out.reserveCapacity(17)
        for i in (0..<6).reversed() {
            let byte = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))
            out += hexByteUpper(byte)
            if i > 0 { out += ":" }
        }
        return out
    }

    /// `AA:BB:CC:DD:EE:FF`, followed by `/random` for random addresses.
    public var description: String {
        type.isRandom ? hexString + "/random" : hexString
    }

    public static func < (lhs: BluetoothAddress, rhs: BluetoothAddress) -> Bool {
        lhs.value != rhs.value ? lhs.value < rhs.value : lhs.type.rawValue < rhs.type.rawValue
    }
}
