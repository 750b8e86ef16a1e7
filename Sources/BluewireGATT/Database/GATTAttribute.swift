import BluewireCore

/// One row of the attribute table (Core Vol 3 Part F §3.2): handle, type, value and permissions.
public struct GATTAttribute: Sendable {
    /// The attribute handle, 0x0001–0xFFFF (0x0000 is reserved, §3.2.2).
    public var handle: UInt16
    /// The attribute type: a declaration (0x2800, 0x2803, ...), a characteristic UUID or a descriptor UUID.
    public var type: BluetoothUUID
    /// Who may read and write the value, and at which link security.
    public var permissions: AttributePermissions
    /// The value, held by the database or produced by the application.
    public var value: GATTAttributeValue

    @inlinable
    public init(handle: UInt16, type: BluetoothUUID, permissions: AttributePermissions, value: GATTAttributeValue) {
        self.handle = handle
        self.type = type
        self.permissions = permissions
        self.value = value
    }

    /// A cached attribute.
    @inlinable
    public init(handle: UInt16, type: BluetoothUUID, permissions: AttributePermissions, bytes: [UInt8]) {
        self.init(handle: handle, type: type, permissions: permissions, value: .cached(bytes))
    }

    /// The bytes held by the database, or nil for a dynamic value.
    @inlinable
    public var cachedValue: [UInt8]? {
        if case .cached(let bytes) = value { return bytes }
        return nil
    }

    /// Whether this is a primary or secondary service declaration (a grouping attribute, Part G §2.5.3).
    @inlinable
    public var isServiceDeclaration: Bool {
        type == .primaryService || type == .secondaryService
    }
}

/// The longest attribute value the Attribute Protocol allows (Core Vol 3 Part F §3.2.9).
public let maximumAttributeValueLength = 512

/// Where an attribute's value comes from.
public enum GATTAttributeValue: Sendable {
    /// Bytes held by the database and served by the stack; writes (when permitted) replace them.
    case cached([UInt8])
    /// Bytes produced and consumed by the application on each read and write.
    case dynamic(GATTDynamicValue)
}
