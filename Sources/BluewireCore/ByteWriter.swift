/// Appends little-endian (and big-endian, for file headers) fields to a growing byte array.
public struct ByteWriter: Sendable {
    public var bytes: [UInt8]

    @inlinable
    public init(capacity: Int = 32) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    @inlinable public var count: Int { bytes.count }

    @inlinable public mutating func append(_ value: UInt8) { bytes.append(value) }

    @inlinable public mutating func append(_ value: Int8) { bytes.append(UInt8(bitPattern: value)) }

    @inlinable
    public mutating func append(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    @inlinable
    public mutating func appendUInt24(_ value: UInt32) {
        for i in 0..<3 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt32(i)))) }
    }

    @inlinable
    public mutating func append(_ value: UInt32) {
        for i in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt32(i)))) }
    }

    @inlinable
    public mutating func append(_ value: UInt64) {
        for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }

    @inlinable
    public mutating func appendBigEndian(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    @inlinable
    public mutating func appendBigEndian(_ value: UInt32) {
        for i in (0..<4).reversed() { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt32(i)))) }
    }

    @inlinable
    public mutating func appendBigEndian(_ value: UInt64) {
        for i in (0..<8).reversed() { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }

    @inlinable
    public mutating func append<C: Collection>(contentsOf data: C) where C.Element == UInt8 {
        bytes.append(contentsOf: data)
    }

    /// Appends a device address in wire order (least significant byte first).
    @inlinable
    public mutating func append(_ address: BluetoothAddress) {
        for i in 0..<6 { bytes.append(UInt8(truncatingIfNeeded: address.value >> (8 * UInt64(i)))) }
    }

    /// Overwrites a little-endian UInt16 at `position` (for length fields known only at the end).
    @inlinable
    public mutating func patch(_ value: UInt16, at position: Int) {
        bytes[position] = UInt8(truncatingIfNeeded: value)
        bytes[position + 1] = UInt8(truncatingIfNeeded: value >> 8)
    }
}
