import BluewireCore

/// A characteristic found on a server (Core Vol 3 Part G §3.3): its declaration, value handle,
/// properties and UUID, and where its definition ends.
public struct GATTCharacteristic: Hashable, Sendable, CustomStringConvertible {
    /// Handle of the characteristic declaration (type 0x2803).
    public var handle: UInt16
    /// Handle of the characteristic value attribute (normally `handle + 1`).
    public var valueHandle: UInt16
    /// The Characteristic Properties from the declaration: what a client may do with the value.
    public var properties: CharacteristicProperties
    /// The characteristic UUID.
    public var uuid: BluetoothUUID
    /// The last handle of the characteristic definition: the handle before the next characteristic
    /// declaration, or the service's end handle for the last characteristic (§4.7.1). Descriptors lie in
    /// `valueHandle + 1 ... endHandle`.
    public var endHandle: UInt16

    @inlinable
    public init(
        handle: UInt16, valueHandle: UInt16, properties: CharacteristicProperties, uuid: BluetoothUUID,
        endHandle: UInt16
    ) {
        self.handle = handle
        self.valueHandle = valueHandle
        self.properties = properties
        self.uuid = uuid
        self.endHandle = endHandle
    }

    /// Whether the definition has room for descriptors after the value.
    @inlinable
    public var mayHaveDescriptors: Bool { valueHandle < endHandle }

    public var description: String {
        "characteristic \(uuid) decl 0x\(hex(handle, width: 4)) value 0x\(hex(valueHandle, width: 4)) "
            + "end 0x\(hex(endHandle, width: 4)) properties 0x\(hex(properties.rawValue, width: 2))"
    }
}
