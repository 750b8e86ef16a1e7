import BluewireCore

/// A Simplified Protocol/Service Multiplexer: the PSM of an LE credit based channel (Core Vol 3 Part A
/// §4.22, Table 4.15). On LE it is one octet wide in value: 0x0001–0x007F are assigned by the
/// Bluetooth SIG, 0x0080–0x00FF are dynamic (an application publishes them, e.g. in a GATT
/// characteristic), 0x0000 and 0x0100 and up are reserved.
public struct SPSM: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    /// 0x0023: Internet Protocol Support Profile.
    public static let ipsp = SPSM(0x0023)
    /// 0x0025: Object Transfer Service.
    public static let ots = SPSM(0x0025)
    /// 0x0027: Enhanced ATT (only over enhanced credit based channels).
    public static let eatt = SPSM(0x0027)

    /// 0x0001–0x007F.
    @inlinable public var isSIGAssigned: Bool { (0x0001...0x007F).contains(rawValue) }
    /// 0x0080–0x00FF.
    @inlinable public var isDynamic: Bool { (0x0080...0x00FF).contains(rawValue) }
    /// Whether the value is in either range (anything else is reserved and cannot be used).
    @inlinable public var isValid: Bool { isSIGAssigned || isDynamic }

    public var description: String {
        let value = "0x\(hex(rawValue, width: 4))"
        switch rawValue {
        case 0x0023: return "IPSP (\(value))"
        case 0x0025: return "OTS (\(value))"
        case 0x0027: return "EATT (\(value))"
        default: return value
        }
    }
}
