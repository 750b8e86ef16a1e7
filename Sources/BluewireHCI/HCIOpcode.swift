import BluewireCore

/// An HCI command opcode: a 6-bit Opcode Group Field and a 10-bit Opcode Command Field
/// (Core Vol 4 Part E §5.4.1), sent little-endian as `OGF << 10 | OCF`.
///
/// A struct rather than an enum so that vendor and future opcodes read from a capture or a
/// controller stay representable; `name` gives the specification's name when it is known.
public struct HCIOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16

    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }

    @inlinable
    public init(ogf: UInt8, ocf: UInt16) {
        rawValue = UInt16(ogf & 0x3F) << 10 | (ocf & 0x03FF)
    }

    /// Opcode Group Field (0x01 link control, 0x03 controller & baseband, 0x04 informational,
    /// 0x08 LE controller, 0x3F vendor specific).
    @inlinable public var ogf: UInt8 { UInt8(truncatingIfNeeded: rawValue >> 10) }
    /// Opcode Command Field.
    @inlinable public var ocf: UInt16 { rawValue & 0x03FF }
    /// Whether the opcode is in the vendor-specific group (OGF 0x3F), whose commands the spec does not define.
    @inlinable public var isVendorSpecific: Bool { ogf == 0x3F }

    /// `LE Set Scan Enable (0x200c)`, or `OGF 0x3f OCF 0x0001 (0xfc01)` for an unnamed opcode.
    public var description: String {
        let code = "0x" + hex(rawValue, width: 4)
        if let name { return name + " (" + code + ")" }
        return "OGF 0x" + hex(ogf, width: 2) + " OCF 0x" + hex(ocf, width: 4) + " (" + code + ")"
    }
}

extension HCIOpcode {
    // Link Control (OGF 0x01)
    public static let disconnect = HCIOpcode(rawValue: 0x0406)
    public static let readRemoteVersionInformation = HCIOpcode(rawValue: 0x041D)
    // Controller & Baseband (OGF 0x03)
    public static let setEventMask = HCIOpcode(rawValue: 0x0C01)
    public static let reset = HCIOpcode(rawValue: 0x0C03)
    public static let setEventMaskPage2 = HCIOpcode(rawValue: 0x0C63)
    // Informational (OGF 0x04)
    public static let readLocalVersionInformation = HCIOpcode(rawValue: 0x1001)
    public static let readLocalSupportedCommands = HCIOpcode(rawValue: 0x1002)
    public static let readLocalSupportedFeatures = HCIOpcode(rawValue: 0x1003)
    public static let readBufferSize = HCIOpcode(rawValue: 0x1005)
    public static let readBDADDR = HCIOpcode(rawValue: 0x1009)
    // LE Controller (OGF 0x08)
    public static let leSetEventMask = HCIOpcode(rawValue: 0x2001)
    public static let leReadBufferSize = HCIOpcode(rawValue: 0x2002)
    public static let leReadLocalSupportedFeatures = HCIOpcode(rawValue: 0x2003)
    public static let leSetRandomAddress = HCIOpcode(rawValue: 0x2005)
    public static let leSetAdvertisingParameters = HCIOpcode(rawValue: 0x2006)
    public static let leReadAdvertisingPhysicalChannelTxPower = HCIOpcode(rawValue: 0x2007)
    public static let leSetAdvertisingData = HCIOpcode(rawValue: 0x2008)
    public static let leSetScanResponseData = HCIOpcode(rawValue: 0x2009)
    public static let leSetAdvertisingEnable = HCIOpcode(rawValue: 0x200A)
    public static let leSetScanParameters = HCIOpcode(rawValue: 0x200B)
    public static let leSetScanEnable = HCIOpcode(rawValue: 0x200C)
    public static let leCreateConnection = HCIOpcode(rawValue: 0x200D)
    public static let leCreateConnectionCancel = HCIOpcode(rawValue: 0x200E)
    public static let leReadFilterAcceptListSize = HCIOpcode(rawValue: 0x200F)
    public static let leClearFilterAcceptList = HCIOpcode(rawValue: 0x2010)
    public static let leAddDeviceToFilterAcceptList = HCIOpcode(rawValue: 0x2011)
    public static let leRemoveDeviceFromFilterAcceptList = HCIOpcode(rawValue: 0x2012)
    public static let leConnectionUpdate = HCIOpcode(rawValue: 0x2013)
    public static let leSetHostChannelClassification = HCIOpcode(rawValue: 0x2014)
    public static let leReadChannelMap = HCIOpcode(rawValue: 0x2015)
    public static let leReadRemoteFeatures = HCIOpcode(rawValue: 0x2016)
    public static let leEncrypt = HCIOpcode(rawValue: 0x2017)
    public static let leRand = HCIOpcode(rawValue: 0x2018)
    public static let leEnableEncryption = HCIOpcode(rawValue: 0x2019)
    public static let leReadLocalP256PublicKey = HCIOpcode(rawValue: 0x2025)
    public static let leGenerateDHKey = HCIOpcode(rawValue: 0x2026)
    public static let leLongTermKeyRequestReply = HCIOpcode(rawValue: 0x201A)
    public static let leLongTermKeyRequestNegativeReply = HCIOpcode(rawValue: 0x201B)
    public static let leReadSupportedStates = HCIOpcode(rawValue: 0x201C)
    public static let leRemoteConnectionParameterRequestReply = HCIOpcode(rawValue: 0x2020)
    public static let leRemoteConnectionParameterRequestNegativeReply = HCIOpcode(rawValue: 0x2021)
    public static let leSetDataLength = HCIOpcode(rawValue: 0x2022)
    public static let leReadSuggestedDefaultDataLength = HCIOpcode(rawValue: 0x2023)
    public static let leWriteSuggestedDefaultDataLength = HCIOpcode(rawValue: 0x2024)
    public static let leAddDeviceToResolvingList = HCIOpcode(rawValue: 0x2027)
    public static let leClearResolvingList = HCIOpcode(rawValue: 0x2029)
    public static let leReadResolvingListSize = HCIOpcode(rawValue: 0x202A)
    public static let leSetAddressResolutionEnable = HCIOpcode(rawValue: 0x202D)
    public static let leReadMaximumDataLength = HCIOpcode(rawValue: 0x202F)
    public static let leReadPHY = HCIOpcode(rawValue: 0x2030)
    public static let leSetDefaultPHY = HCIOpcode(rawValue: 0x2031)
    public static let leSetPHY = HCIOpcode(rawValue: 0x2032)
    public static let leSetAdvertisingSetRandomAddress = HCIOpcode(rawValue: 0x2035)
    public static let leSetExtendedAdvertisingParameters = HCIOpcode(rawValue: 0x2036)
    public static let leSetExtendedAdvertisingData = HCIOpcode(rawValue: 0x2037)
    public static let leSetExtendedScanResponseData = HCIOpcode(rawValue: 0x2038)
    public static let leSetExtendedAdvertisingEnable = HCIOpcode(rawValue: 0x2039)
    public static let leReadMaximumAdvertisingDataLength = HCIOpcode(rawValue: 0x203A)
    public static let leReadNumberOfSupportedAdvertisingSets = HCIOpcode(rawValue: 0x203B)
    public static let leRemoveAdvertisingSet = HCIOpcode(rawValue: 0x203C)
    public static let leClearAdvertisingSets = HCIOpcode(rawValue: 0x203D)
    public static let leSetExtendedScanParameters = HCIOpcode(rawValue: 0x2041)
    public static let leSetExtendedScanEnable = HCIOpcode(rawValue: 0x2042)
    public static let leExtendedCreateConnection = HCIOpcode(rawValue: 0x2043)
    public static let leReadBufferSizeV2 = HCIOpcode(rawValue: 0x2060)
    public static let leSetHostFeature = HCIOpcode(rawValue: 0x2074)

    /// The Core specification's name of the command, for display; nil for vendor or unknown opcodes.
    public var name: String? {
        switch rawValue {
        case 0x0401: "Inquiry"
        case 0x0402: "Inquiry Cancel"
        case 0x0405: "Create Connection"
        case 0x0406: "Disconnect"
        case 0x0408: "Create Connection Cancel"
        case 0x0409: "Accept Connection Request"
        case 0x040B: "Link Key Request Reply"
        case 0x040C: "Link Key Request Negative Reply"
        case 0x0411: "Authentication Requested"
        case 0x0413: "Set Connection Encryption"
        case 0x0419: "Remote Name Request"
        case 0x041B: "Read Remote Supported Features"
        case 0x041C: "Read Remote Extended Features"
        case 0x041D: "Read Remote Version Information"
        case 0x0C01: "Set Event Mask"
        case 0x0C03: "Reset"
        case 0x0C05: "Set Event Filter"
        case 0x0C13: "Write Local Name"
        case 0x0C14: "Read Local Name"
        case 0x0C1A: "Write Scan Enable"
        case 0x0C24: "Write Class of Device"
        case 0x0C2D: "Read Transmit Power Level"
        case 0x0C31: "Set Controller To Host Flow Control"
        case 0x0C33: "Host Buffer Size"
        case 0x0C35: "Host Number Of Completed Packets"
        case 0x0C56: "Write Simple Pairing Mode"
        case 0x0C63: "Set Event Mask Page 2"
        case 0x0C6D: "Write LE Host Support"
        case 0x0C7A: "Write Secure Connections Host Support"
        case 0x0C7B: "Read Authenticated Payload Timeout"
        case 0x0C7C: "Write Authenticated Payload Timeout"
        case 0x1001: "Read Local Version Information"
        case 0x1002: "Read Local Supported Commands"
        case 0x1003: "Read Local Supported Features"
        case 0x1004: "Read Local Extended Features"
        case 0x1005: "Read Buffer Size"
        case 0x1009: "Read BD_ADDR"
        case 0x100B: "Read Local Supported Codecs"
        case 0x1405: "Read RSSI"
        default: leName
        }
    }

    private var leName: String? {
        switch rawValue {
        case 0x2001: "LE Set Event Mask"
        case 0x2002: "LE Read Buffer Size"
        case 0x2003: "LE Read Local Supported Features"
        case 0x2005: "LE Set Random Address"
        case 0x2006: "LE Set Advertising Parameters"
        case 0x2007: "LE Read Advertising Physical Channel Tx Power"
        case 0x2008: "LE Set Advertising Data"
        case 0x2009: "LE Set Scan Response Data"
        case 0x200A: "LE Set Advertising Enable"
        case 0x200B: "LE Set Scan Parameters"
        case 0x200C: "LE Set Scan Enable"
        case 0x200D: "LE Create Connection"
        case 0x200E: "LE Create Connection Cancel"
        case 0x200F: "LE Read Filter Accept List Size"
        case 0x2010: "LE Clear Filter Accept List"
        case 0x2011: "LE Add Device To Filter Accept List"
        case 0x2012: "LE Remove Device From Filter Accept List"
        case 0x2013: "LE Connection Update"
        case 0x2014: "LE Set Host Channel Classification"
        case 0x2015: "LE Read Channel Map"
        case 0x2016: "LE Read Remote Features"
        case 0x2017: "LE Encrypt"
        case 0x2018: "LE Rand"
        case 0x2019: "LE Enable Encryption"
        case 0x201A: "LE Long Term Key Request Reply"
        case 0x201B: "LE Long Term Key Request Negative Reply"
        case 0x201C: "LE Read Supported States"
        case 0x2020: "LE Remote Connection Parameter Request Reply"
        case 0x2021: "LE Remote Connection Parameter Request Negative Reply"
        case 0x2022: "LE Set Data Length"
        case 0x2023: "LE Read Suggested Default Data Length"
        case 0x2024: "LE Write Suggested Default Data Length"
        case 0x2025: "LE Read Local P-256 Public Key"
        case 0x2026: "LE Generate DHKey"
        case 0x2027: "LE Add Device To Resolving List"
        case 0x2028: "LE Remove Device From Resolving List"
        case 0x2029: "LE Clear Resolving List"
        case 0x202A: "LE Read Resolving List Size"
        case 0x202D: "LE Set Address Resolution Enable"
        case 0x202E: "LE Set Resolvable Private Address Timeout"
        case 0x202F: "LE Read Maximum Data Length"
        case 0x2030: "LE Read PHY"
        case 0x2031: "LE Set Default PHY"
        case 0x2032: "LE Set PHY"
        case 0x2035: "LE Set Advertising Set Random Address"
        case 0x2036: "LE Set Extended Advertising Parameters"
        case 0x2037: "LE Set Extended Advertising Data"
        case 0x2038: "LE Set Extended Scan Response Data"
        case 0x2039: "LE Set Extended Advertising Enable"
        case 0x203A: "LE Read Maximum Advertising Data Length"
        case 0x203B: "LE Read Number of Supported Advertising Sets"
        case 0x203C: "LE Remove Advertising Set"
        case 0x203D: "LE Clear Advertising Sets"
        case 0x203E: "LE Set Periodic Advertising Parameters"
        case 0x2041: "LE Set Extended Scan Parameters"
        case 0x2042: "LE Set Extended Scan Enable"
        case 0x2043: "LE Extended Create Connection"
        case 0x204A: "LE Read Transmit Power"
        case 0x204E: "LE Set Privacy Mode"
        case 0x2060: "LE Read Buffer Size [v2]"
        case 0x2074: "LE Set Host Feature"
        case 0x207F: "LE Set Extended Advertising Parameters [v2]"
        case 0x2085: "LE Extended Create Connection [v2]"
        default: nil
        }
    }
}
