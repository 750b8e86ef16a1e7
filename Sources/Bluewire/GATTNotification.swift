/// A notification or indication received from a peer's GATT server.
public struct GATTNotification: Sendable, Hashable {
    /// The characteristic value handle.
    public var handle: UInt16
    /// The value, a slice of the packet it arrived in (no copy).
    public var value: ArraySlice<UInt8>
    /// True for an indication (which the host has confirmed), false for a notification.
    public var isIndication: Bool

    @inlinable
    public init(handle: UInt16, value: ArraySlice<UInt8>, isIndication: Bool) {
        self.handle = handle
        self.value = value
        self.isIndication = isIndication
    }
}
