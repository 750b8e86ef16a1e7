import BluewireCore

/// An include definition (Core Vol 3 Part G §3.2): the include declaration inside the including
/// service, and the service it refers to (which may be primary or secondary; the declaration does not
/// say which).
public struct GATTIncludedService: Hashable, Sendable, CustomStringConvertible {
    /// Handle of the include declaration (type 0x2802).
    public var declarationHandle: UInt16
    /// Handle of the included service's declaration.
    public var serviceHandle: UInt16
    /// The included service's End Group Handle.
    public var endHandle: UInt16
    /// The included service's UUID (read separately when it is 128-bit, §4.5.1).
    public var uuid: BluetoothUUID

    @inlinable
    public init(declarationHandle: UInt16, serviceHandle: UInt16, endHandle: UInt16, uuid: BluetoothUUID) {
        self.declarationHandle = declarationHandle
        self.serviceHandle = serviceHandle
        self.endHandle = endHandle
        self.uuid = uuid
    }

    public var description: String {
        "include 0x\(hex(declarationHandle, width: 4)) → \(uuid) 0x\(hex(serviceHandle, width: 4))-0x\(hex(endHandle, width: 4))"
    }
}
