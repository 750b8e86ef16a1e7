/// The Characteristic Properties bit field of a characteristic declaration (Core Vol 3 Part G §3.3.1.1).
///
/// Properties tell a client what it may do; the server enforces attribute permissions separately.
/// Notify and Indicate require a Client Characteristic Configuration descriptor (§3.3.3.3), which the
/// database builder adds automatically.
public struct CharacteristicProperties: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8

    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let broadcast = CharacteristicProperties(rawValue: 0x01)
    public static let read = CharacteristicProperties(rawValue: 0x02)
    public static let writeWithoutResponse = CharacteristicProperties(rawValue: 0x04)
    public static let write = CharacteristicProperties(rawValue: 0x08)
    public static let notify = CharacteristicProperties(rawValue: 0x10)
    public static let indicate = CharacteristicProperties(rawValue: 0x20)
    public static let authenticatedSignedWrites = CharacteristicProperties(rawValue: 0x40)
    public static let extendedProperties = CharacteristicProperties(rawValue: 0x80)

    /// The names used in GATT database files, in bit order.
    public static let fileNames: [(name: String, property: CharacteristicProperties)] = [
        ("broadcast", .broadcast), ("read", .read), ("write_without_response", .writeWithoutResponse),
        ("write", .write), ("notify", .notify), ("indicate", .indicate),
        ("authenticated_signed_writes", .authenticatedSignedWrites), ("extended_properties", .extendedProperties),
    ]

    /// The property a file name stands for, or nil for an unknown name.
    public init?(fileName: String) {
        for entry in CharacteristicProperties.fileNames where entry.name == fileName {
            self = entry.property
            return
        }
        return nil
    }

    /// The file names of the bits set, in bit order.
    public var fileNames: [String] {
        var names: [String] = []
        for entry in CharacteristicProperties.fileNames where contains(entry.property) { names.append(entry.name) }
        return names
    }

    /// Whether a Client Characteristic Configuration descriptor is required.
    @inlinable public var needsClientConfiguration: Bool { !intersection([.notify, .indicate]).isEmpty }

    /// The permissions implied when a database file gives properties but no `perms`.
    public var impliedPermissions: AttributePermissions {
        var perms: AttributePermissions = []
        if contains(.read) { perms.insert(.read) }
        if !intersection([.write, .writeWithoutResponse, .authenticatedSignedWrites]).isEmpty { perms.insert(.write) }
        return perms
    }
}
