import BluewireCore

/// A service found on a server: its declaration handle, the last handle of its group, and its UUID
/// (Core Vol 3 Part G §3.1).
public struct GATTService: Hashable, Sendable, CustomStringConvertible {
    /// Handle of the service declaration (the start of the group).
    public var handle: UInt16
    /// The last handle that belongs to the service (End Group Handle).
    public var endHandle: UInt16
    /// The service UUID.
    public var uuid: BluetoothUUID
    /// Primary (0x2800) or secondary (0x2801) service. Secondary services are only found as includes.
    public var isPrimary: Bool

    @inlinable
    public init(handle: UInt16, endHandle: UInt16, uuid: BluetoothUUID, isPrimary: Bool = true) {
        self.handle = handle
        self.endHandle = endHandle
        self.uuid = uuid
        self.isPrimary = isPrimary
    }

    /// The handles of the service definition.
    @inlinable
    public var handleRange: ClosedRange<UInt16> { handle...max(handle, endHandle) }

    public var description: String {
        "\(isPrimary ? "primary" : "secondary") service \(uuid) 0x\(hex(handle, width: 4))-0x\(hex(endHandle, width: 4))"
    }
}
