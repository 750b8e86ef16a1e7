import BluewireCore

/// The Code of an L2CAP signaling command (Core Vol 3 Part A §4, Table 4.2).
///
/// A struct because any byte may arrive; unknown codes are answered with Command Reject.
public struct LESignalingCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let commandReject = LESignalingCode(0x01)
    public static let connectionRequest = LESignalingCode(0x02)
    public static let connectionResponse = LESignalingCode(0x03)
    public static let configurationRequest = LESignalingCode(0x04)
    public static let configurationResponse = LESignalingCode(0x05)
    public static let disconnectionRequest = LESignalingCode(0x06)
    public static let disconnectionResponse = LESignalingCode(0x07)
    public static let echoRequest = LESignalingCode(0x08)
    public static let echoResponse = LESignalingCode(0x09)
    public static let informationRequest = LESignalingCode(0x0A)
    public static let informationResponse = LESignalingCode(0x0B)
    public static let connectionParameterUpdateRequest = LESignalingCode(0x12)
    public static let connectionParameterUpdateResponse = LESignalingCode(0x13)
    public static let leCreditBasedConnectionRequest = LESignalingCode(0x14)
    public static let leCreditBasedConnectionResponse = LESignalingCode(0x15)
    public static let flowControlCreditIndication = LESignalingCode(0x16)
    public static let creditBasedConnectionRequest = LESignalingCode(0x17)
    public static let creditBasedConnectionResponse = LESignalingCode(0x18)
    public static let creditBasedReconfigureRequest = LESignalingCode(0x19)
    public static let creditBasedReconfigureResponse = LESignalingCode(0x1A)

    /// The specification's name; nil for codes it does not define.
    public var name: String? {
        switch rawValue {
        case 0x01: return "Command Reject"
        case 0x02: return "Connection Request"
        case 0x03: return "Connection Response"
        case 0x04: return "Configuration Request"
        case 0x05: return "Configuration Response"
        case 0x06: return "Disconnection Request"
        case 0x07: return "Disconnection Response"
        case 0x08: return "Echo Request"
        case 0x09: return "Echo Response"
        case 0x0A: return "Information Request"
        case 0x0B: return "Information Response"
        case 0x12: return "Connection Parameter Update Request"
        case 0x13: return "Connection Parameter Update Response"
        case 0x14: return "LE Credit Based Connection Request"
        case 0x15: return "LE Credit Based Connection Response"
        case 0x16: return "Flow Control Credit Indication"
        case 0x17: return "Credit Based Connection Request"
        case 0x18: return "Credit Based Connection Response"
        case 0x19: return "Credit Based Reconfigure Request"
        case 0x1A: return "Credit Based Reconfigure Response"
        default: return nil
        }
    }

    public var description: String { name ?? "Unknown (0x\(hex(rawValue, width: 2)))" }
}

/// The Reason of a Command Reject (Core Vol 3 Part A §4.1, Table 4.3).
public struct LESignalingRejectReason: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 0x0000: command not understood (no data).
    public static let commandNotUnderstood = LESignalingRejectReason(rawValue: 0x0000)
    /// 0x0001: signaling MTU exceeded (data: the actual MTU, 2 octets).
    public static let signalingMTUExceeded = LESignalingRejectReason(rawValue: 0x0001)
    /// 0x0002: invalid CID in request (data: local CID and remote CID, 2 octets each).
    public static let invalidCIDInRequest = LESignalingRejectReason(rawValue: 0x0002)
}
