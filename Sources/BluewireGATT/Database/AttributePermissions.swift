/// Who may read or write an attribute, and at which security level (Core Vol 3 Part F §3.2.5).
///
/// Permissions are not sent over the air: the server alone enforces them. An attribute is readable when
/// any read bit is set; the strongest bit set decides the link security needed. A link that lacks it gets
/// Insufficient Authentication (authenticated pairing needed) or Insufficient Encryption (encryption
/// needed), checked in that order as Core Vol 3 Part C §10.3 describes.
public struct AttributePermissions: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8

    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Readable on any link.
    public static let read = AttributePermissions(rawValue: 1 << 0)
    /// Writable on any link.
    public static let write = AttributePermissions(rawValue: 1 << 1)
    /// Readable only on an encrypted link.
    public static let readEncrypted = AttributePermissions(rawValue: 1 << 2)
    /// Writable only on an encrypted link.
    public static let writeEncrypted = AttributePermissions(rawValue: 1 << 3)
    /// Readable only on a link encrypted with an authenticated (MITM-protected) key.
    public static let readAuthenticated = AttributePermissions(rawValue: 1 << 4)
    /// Writable only on a link encrypted with an authenticated (MITM-protected) key.
    public static let writeAuthenticated = AttributePermissions(rawValue: 1 << 5)

    /// Every read bit.
    public static let anyRead: AttributePermissions = [.read, .readEncrypted, .readAuthenticated]
    /// Every write bit.
    public static let anyWrite: AttributePermissions = [.write, .writeEncrypted, .writeAuthenticated]

    /// Whether some read bit is set.
    @inlinable public var isReadable: Bool { !intersection(.anyRead).isEmpty }
    /// Whether some write bit is set.
    @inlinable public var isWritable: Bool { !intersection(.anyWrite).isEmpty }

    /// The link security a read needs.
    @inlinable public var readSecurity: GATTSecurityLevel {
        if contains(.readAuthenticated) { return .authenticated }
        if contains(.readEncrypted) { return .encrypted }
        return .none
    }

    /// The link security a write needs.
    @inlinable public var writeSecurity: GATTSecurityLevel {
        if contains(.writeAuthenticated) { return .authenticated }
        if contains(.writeEncrypted) { return .encrypted }
        return .none
    }

    /// The names used in GATT database files, in bit order.
    public static let fileNames: [(name: String, permission: AttributePermissions)] = [
        ("read", .read), ("write", .write),
        ("read_encrypted", .readEncrypted), ("write_encrypted", .writeEncrypted),
        ("read_authenticated", .readAuthenticated), ("write_authenticated", .writeAuthenticated),
    ]

    /// The permission a file name stands for, or nil for an unknown name.
    public init?(fileName: String) {
        for entry in AttributePermissions.fileNames where entry.name == fileName {
            self = entry.permission
            return
        }
        return nil
    }

    /// The file names of the bits set, in bit order.
    public var fileNames: [String] {
        var names: [String] = []
        for entry in AttributePermissions.fileNames where contains(entry.permission) { names.append(entry.name) }
        return names
    }
}

/// The security of a link as the server sees it when checking permissions.
///
/// Ordered: each level includes the ones below it.
public enum GATTSecurityLevel: UInt8, Comparable, Hashable, Sendable {
    /// Not encrypted.
    case none = 0
    /// Encrypted with an unauthenticated key (Just Works pairing).
    case encrypted = 1
    /// Encrypted with an authenticated (MITM-protected) key.
    case authenticated = 2

    @inlinable
    public static func < (lhs: GATTSecurityLevel, rhs: GATTSecurityLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}
