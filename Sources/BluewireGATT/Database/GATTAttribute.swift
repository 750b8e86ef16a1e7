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

    /// The bytes held by the database: a cached value, or a dynamic value the server keeps
    /// (`GATTDynamicValue.stored`); nil for a value the application's handlers produce.
    @inlinable
    public var cachedValue: [UInt8]? {
        switch value {
        case .cached(let bytes): return bytes
        case .dynamic(let dynamic): return dynamic.stored
        }
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
    /// Bytes fixed by the application (`setValue` replaces them) and served by the stack: read-only to
    /// centrals, whose writes get Write Not Permitted (Docs/Design.md, "Peripheral role").
    case cached([UInt8])
    /// A value that changes as the server runs: the application's handlers, or bytes the server keeps
    /// and centrals may write (`GATTDynamicValue.stored`). Anything writable is dynamic.
    case dynamic(GATTDynamicValue)

    /// `self`, unless it is a cached value on an attribute of `type` centrals may write: then a
    /// dynamic value the server keeps, starting with those bytes (a cached value is read-only to
    /// centrals). A Client Characteristic Configuration descriptor and Client Supported Features stay
    /// as given: the server keeps their value per client (Core Vol 3 Part G §3.3.3.3, §7.2), never in
    /// the database.
    @inlinable
    public func writable(_ permissions: AttributePermissions, type: BluetoothUUID) -> GATTAttributeValue {
        guard permissions.isWritable, type != .clientCharacteristicConfiguration, type != .clientSupportedFeatures,
              case .cached(let bytes) = self else { return self }
        return .dynamic(.stored(bytes))
    }
}
