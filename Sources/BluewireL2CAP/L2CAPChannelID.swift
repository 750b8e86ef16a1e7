/// An L2CAP channel identifier (Core Vol 3 Part A §2.1, Table 2.1 for BR/EDR and Table 2.3 for LE).
///
/// A struct because dynamically allocated channels (0x0040 and up) and future fixed channels can
/// arrive on the link and must be representable.
public struct L2CAPChannelID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    /// 0x0000: the null identifier, never used as a destination.
    public static let null = L2CAPChannelID(0x0000)
    /// 0x0001: the BR/EDR L2CAP signaling channel.
    public static let signaling = L2CAPChannelID(0x0001)
    /// 0x0002: BR/EDR connectionless channel.
    public static let connectionless = L2CAPChannelID(0x0002)
    /// 0x0004: the Attribute Protocol.
    public static let att = L2CAPChannelID(0x0004)
    /// 0x0005: the LE L2CAP signaling channel.
    public static let leSignaling = L2CAPChannelID(0x0005)
    /// 0x0006: the Security Manager Protocol (LE).
    public static let smp = L2CAPChannelID(0x0006)
    /// 0x0007: the Security Manager Protocol over BR/EDR.
    public static let brEdrSMP = L2CAPChannelID(0x0007)

    /// Whether the channel is dynamically allocated (LE: 0x0040–0x007F; BR/EDR: 0x0040 and up).
    @inlinable public var isDynamic: Bool { rawValue >= 0x0040 }

    /// The channel's name, e.g. "ATT"; nil for dynamic or unknown channels.
    public var name: String? {
        switch rawValue {
        case 0x0001: return "L2CAP Signaling"
        case 0x0002: return "Connectionless"
        case 0x0004: return "ATT"
        case 0x0005: return "LE Signaling"
        case 0x0006: return "SMP"
        case 0x0007: return "BR/EDR SMP"
        default: return nil
        }
    }

    public var description: String {
        let digits = String(rawValue, radix: 16)
        let padded = String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        return name.map { "\($0) (0x\(padded))" } ?? "0x\(padded)"
    }
}
