import BluewireCore

/// The value of a Service Changed characteristic indication (Core Vol 3 Part G §7.1): the range of
/// attribute handles the server added, removed or modified. The client must treat every handle in it
/// as invalid and rediscover that range.
public struct ServiceChanged: Hashable, Sendable {
    /// Start of Affected Attribute Handle Range.
    public var startHandle: UInt16
    /// End of Affected Attribute Handle Range.
    public var endHandle: UInt16

    @inlinable
    public init(startHandle: UInt16, endHandle: UInt16) {
        self.startHandle = startHandle
        self.endHandle = endHandle
    }

    /// Decodes the 4-octet indication value (two little-endian handles).
    @inlinable
    public init(value: ArraySlice<UInt8>) throws(DecodeError) {
        var reader = ByteReader(value, layer: "gatt")
        startHandle = try reader.readUInt16("Start of Affected Attribute Handle Range")
        endHandle = try reader.readUInt16("End of Affected Attribute Handle Range")
        try reader.expectEnd("Service Changed")
        guard startHandle <= endHandle else {
            throw DecodeError(.invalidValue(UInt64(endHandle)), layer: "gatt", field: "End of Affected Attribute Handle Range", offset: 2)
        }
    }

    /// The affected handles.
    @inlinable
    public var range: ClosedRange<UInt16> { startHandle...endHandle }
}
