import BluewireCore

/// A characteristic descriptor found by Find Information (Core Vol 3 Part G §3.3.3, §4.7.1).
public struct GATTDescriptor: Hashable, Sendable, CustomStringConvertible {
    public var handle: UInt16
    /// The descriptor type (0x2902 for a Client Characteristic Configuration, ...).
    public var uuid: BluetoothUUID

    @inlinable
    public init(handle: UInt16, uuid: BluetoothUUID) {
        self.handle = handle
        self.uuid = uuid
    }

    public var description: String { "descriptor \(uuid) 0x\(hex(handle, width: 4))" }
}
