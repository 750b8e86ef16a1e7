import BluewireCore

/// An HCI event code (Core Vol 4 Part E §7.7), with the specification's name for display.
public struct HCIEventCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let disconnectionComplete = HCIEventCode(rawValue: 0x05)
    public static let encryptionChangeV1 = HCIEventCode(rawValue: 0x08)
    public static let readRemoteVersionInformationComplete = HCIEventCode(rawValue: 0x0C)
    public static let commandComplete = HCIEventCode(rawValue: 0x0E)
    public static let commandStatus = HCIEventCode(rawValue: 0x0F)
    public static let hardwareError = HCIEventCode(rawValue: 0x10)
    public static let numberOfCompletedPackets = HCIEventCode(rawValue: 0x13)
    public static let encryptionKeyRefreshComplete = HCIEventCode(rawValue: 0x30)
    public static let leMeta = HCIEventCode(rawValue: 0x3E)
    public static let encryptionChangeV2 = HCIEventCode(rawValue: 0x59)

    public var description: String {
        let code = "0x" + hex(rawValue, width: 2)
        if let name { return name + " (" + code + ")" }
        return "Unknown event (" + code + ")"
    }

    public var name: String? {
        switch rawValue {
        case 0x01: "Inquiry Complete"
        case 0x02: "Inquiry Result"
        case 0x03: "Connection Complete"
        case 0x04: "Connection Request"
        case 0x05: "Disconnection Complete"
        case 0x06: "Authentication Complete"
        case 0x07: "Remote Name Request Complete"
        case 0x08: "Encryption Change"
        case 0x0B: "Read Remote Supported Features Complete"
        case 0x0C: "Read Remote Version Information Complete"
        case 0x0E: "Command Complete"
        case 0x0F: "Command Status"
        case 0x10: "Hardware Error"
        case 0x12: "Role Change"
        case 0x13: "Number Of Completed Packets"
        case 0x14: "Mode Change"
        case 0x17: "Link Key Request"
        case 0x18: "Link Key Notification"
        case 0x1A: "Data Buffer Overflow"
        case 0x1B: "Max Slots Change"
        case 0x23: "Read Remote Extended Features Complete"
        case 0x2C: "Synchronous Connection Complete"
        case 0x2F: "Extended Inquiry Result"
        case 0x30: "Encryption Key Refresh Complete"
        case 0x31: "IO Capability Request"
        case 0x32: "IO Capability Response"
        case 0x33: "User Confirmation Request"
        case 0x36: "Simple Pairing Complete"
        case 0x3E: "LE Meta"
        case 0x57: "Authenticated Payload Timeout Expired"
        case 0x59: "Encryption Change [v2]"
        case 0xFF: "Vendor Specific"
        default: nil
        }
    }
}

/// An LE Meta subevent code (Core Vol 4 Part E §7.7.65), with its name for display.
public struct LESubeventCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let connectionComplete = LESubeventCode(rawValue: 0x01)
    public static let advertisingReport = LESubeventCode(rawValue: 0x02)
    public static let connectionUpdateComplete = LESubeventCode(rawValue: 0x03)
    public static let readRemoteFeaturesComplete = LESubeventCode(rawValue: 0x04)
    public static let longTermKeyRequest = LESubeventCode(rawValue: 0x05)
    public static let dataLengthChange = LESubeventCode(rawValue: 0x07)
    public static let enhancedConnectionCompleteV1 = LESubeventCode(rawValue: 0x0A)
    public static let directedAdvertisingReport = LESubeventCode(rawValue: 0x0B)
    public static let phyUpdateComplete = LESubeventCode(rawValue: 0x0C)
    public static let extendedAdvertisingReport = LESubeventCode(rawValue: 0x0D)
    public static let advertisingSetTerminated = LESubeventCode(rawValue: 0x12)
    public static let channelSelectionAlgorithm = LESubeventCode(rawValue: 0x14)
    public static let enhancedConnectionCompleteV2 = LESubeventCode(rawValue: 0x29)

    public var description: String {
        let code = "0x" + hex(rawValue, width: 2)
        if let name { return name + " (" + code + ")" }
        return "Unknown LE subevent (" + code + ")"
    }

    public var name: String? {
        switch rawValue {
        case 0x01: "LE Connection Complete"
        case 0x02: "LE Advertising Report"
        case 0x03: "LE Connection Update Complete"
        case 0x04: "LE Read Remote Features Complete"
        case 0x05: "LE Long Term Key Request"
        case 0x06: "LE Remote Connection Parameter Request"
        case 0x07: "LE Data Length Change"
        case 0x08: "LE Read Local P-256 Public Key Complete"
        case 0x09: "LE Generate DHKey Complete"
        case 0x0A: "LE Enhanced Connection Complete"
        case 0x0B: "LE Directed Advertising Report"
        case 0x0C: "LE PHY Update Complete"
        case 0x0D: "LE Extended Advertising Report"
        case 0x0E: "LE Periodic Advertising Sync Established"
        case 0x0F: "LE Periodic Advertising Report"
        case 0x10: "LE Periodic Advertising Sync Lost"
        case 0x11: "LE Scan Timeout"
        case 0x12: "LE Advertising Set Terminated"
        case 0x13: "LE Scan Request Received"
        case 0x14: "LE Channel Selection Algorithm"
        case 0x29: "LE Enhanced Connection Complete [v2]"
        default: nil
        }
    }
}
