import BluewireCore

/// An AD type (Bluetooth Assigned Numbers §2.3; formats in Core Specification Supplement Part A §1).
public struct ADType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let flags = ADType(0x01)
    public static let incompleteList16BitServiceUUIDs = ADType(0x02)
    public static let completeList16BitServiceUUIDs = ADType(0x03)
    public static let incompleteList32BitServiceUUIDs = ADType(0x04)
    public static let completeList32BitServiceUUIDs = ADType(0x05)
    public static let incompleteList128BitServiceUUIDs = ADType(0x06)
    public static let completeList128BitServiceUUIDs = ADType(0x07)
    public static let shortenedLocalName = ADType(0x08)
    public static let completeLocalName = ADType(0x09)
    public static let txPowerLevel = ADType(0x0A)
    public static let peripheralConnectionIntervalRange = ADType(0x12)
    public static let serviceData16BitUUID = ADType(0x16)
    public static let appearance = ADType(0x19)
    public static let leRole = ADType(0x1C)
    public static let serviceData32BitUUID = ADType(0x20)
    public static let serviceData128BitUUID = ADType(0x21)
    public static let uri = ADType(0x24)
    public static let manufacturerSpecificData = ADType(0xFF)

    public var description: String {
        let code = "0x" + hex(rawValue, width: 2)
        if let name { return name + " (" + code + ")" }
        return "Unknown AD type (" + code + ")"
    }

    /// The Assigned Numbers name, for display.
    public var name: String? {
        switch rawValue {
        case 0x01: "Flags"
        case 0x02: "Incomplete List of 16-bit Service or Service Class UUIDs"
        case 0x03: "Complete List of 16-bit Service or Service Class UUIDs"
        case 0x04: "Incomplete List of 32-bit Service or Service Class UUIDs"
        case 0x05: "Complete List of 32-bit Service or Service Class UUIDs"
        case 0x06: "Incomplete List of 128-bit Service or Service Class UUIDs"
        case 0x07: "Complete List of 128-bit Service or Service Class UUIDs"
        case 0x08: "Shortened Local Name"
        case 0x09: "Complete Local Name"
        case 0x0A: "Tx Power Level"
        case 0x0D: "Class of Device"
        case 0x0E: "Simple Pairing Hash C-192"
        case 0x0F: "Simple Pairing Randomizer R-192"
        case 0x10: "Device ID"
        case 0x11: "Security Manager Out of Band Flags"
        case 0x12: "Peripheral Connection Interval Range"
        case 0x14: "List of 16-bit Service Solicitation UUIDs"
        case 0x15: "List of 128-bit Service Solicitation UUIDs"
        case 0x16: "Service Data - 16-bit UUID"
        case 0x17: "Public Target Address"
        case 0x18: "Random Target Address"
        case 0x19: "Appearance"
        case 0x1A: "Advertising Interval"
        case 0x1B: "LE Bluetooth Device Address"
        case 0x1C: "LE Role"
        case 0x1F: "List of 32-bit Service Solicitation UUIDs"
        case 0x20: "Service Data - 32-bit UUID"
        case 0x21: "Service Data - 128-bit UUID"
        case 0x24: "URI"
        case 0x27: "LE Supported Features"
        case 0x29: "PB-ADV"
        case 0x2A: "Mesh Message"
        case 0x2B: "Mesh Beacon"
        case 0x2C: "BIGInfo"
        case 0x2D: "Broadcast_Code"
        case 0x2E: "Resolvable Set Identifier"
        case 0x30: "Broadcast Name"
        case 0x3D: "3D Information Data"
        case 0xFF: "Manufacturer Specific Data"
        default: nil
        }
    }
}

/// The Flags AD structure (Core Supplement Part A §1.3).
public struct ADFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let leLimitedDiscoverableMode = ADFlags(rawValue: 1 << 0)
    public static let leGeneralDiscoverableMode = ADFlags(rawValue: 1 << 1)
    public static let brEdrNotSupported = ADFlags(rawValue: 1 << 2)
    /// Previously used: simultaneous LE and BR/EDR (controller).
    public static let simultaneousLEAndBREDRController = ADFlags(rawValue: 1 << 3)
}
