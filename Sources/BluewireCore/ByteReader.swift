/// A bounds-checked little-endian (and, for file headers, big-endian) reader over borrowed bytes.
///
/// Sub-ranges are returned as `ArraySlice`s that share the caller's storage: reading a well-formed
/// packet allocates nothing. Every read names its field so a failure says what and where.
public struct ByteReader: Sendable {
    /// The bytes being read. Indices are those of the underlying array.
    public let bytes: ArraySlice<UInt8>
    @usableFromInline var _index: Int
    /// The index of the next byte to read.
    @inlinable public var index: Int { _index }
    /// Layer name reported in errors.
    public let layer: StaticString

    @inlinable
    public init(_ bytes: ArraySlice<UInt8>, layer: StaticString = "core") {
        self.bytes = bytes
        self._index = bytes.startIndex
        self.layer = layer
    }

    @inlinable
    public init(_ bytes: [UInt8], layer: StaticString = "core") {
        self.init(bytes[...], layer: layer)
    }

    /// Offset of the next byte from the start of `bytes`.
    @inlinable public var offset: Int { _index - bytes.startIndex }
    /// Bytes not yet read.
    @inlinable public var remainingCount: Int { bytes.endIndex - _index }
    /// Whether every byte has been read.
    @inlinable public var isAtEnd: Bool { _index >= bytes.endIndex }

    @inlinable @inline(__always)
    func truncated(_ needed: Int, _ field: StaticString) -> DecodeError {
        DecodeError(.truncated(needed: needed, available: remainingCount), layer: layer, field: field, offset: offset)
    }

    /// Fails unless `count` more bytes are available.
    @inlinable @inline(__always)
    public func require(_ count: Int, _ field: StaticString) throws(DecodeError) {
        guard count >= 0, remainingCount >= count else { throw truncated(count, field) }
    }

    @inlinable @inline(__always)
    public mutating func readUInt8(_ field: StaticString) throws(DecodeError) -> UInt8 {
        guard _index < bytes.endIndex else { throw truncated(1, field) }
        let value = bytes[_index]
        _index &+= 1
        return value
    }

    @inlinable @inline(__always)
    public mutating func readInt8(_ field: StaticString) throws(DecodeError) -> Int8 {
        Int8(bitPattern: try readUInt8(field))
    }

    @inlinable @inline(__always)
    public mutating func readUInt16(_ field: StaticString) throws(DecodeError) -> UInt16 {
        try require(2, field)
        let value = UInt16(bytes[_index]) | UInt16(bytes[_index &+ 1]) << 8
        _index &+= 2
        return value
    }

    @inlinable @inline(__always)
    public mutating func readUInt24(_ field: StaticString) throws(DecodeError) -> UInt32 {
        try require(3, field)
        let value = UInt32(bytes[_index]) | UInt32(bytes[_index &+ 1]) << 8 | UInt32(bytes[_index &+ 2]) << 16
        _index &+= 3
        return value
    }

    @inlinable @inline(__always)
    public mutating func readUInt32(_ field: StaticString) throws(DecodeError) -> UInt32 {
        try require(4, field)
        var value: UInt32 = 0
        for i in 0..<4 { value |= UInt32(bytes[_index &+ i]) << (8 * UInt32(i)) }
        _index &+= 4
        return value
    }

    @inlinable @inline(__always)
    public mutating func readUInt64(_ field: StaticString) throws(DecodeError) -> UInt64 {
        try require(8, field)
        var value: UInt64 = 0
        for i in 0..<8 { value |= UInt64(bytes[_index &+ i]) << (8 * UInt64(i)) }
        _index &+= 8
        return value
    }

    @inlinable @inline(__always)
    public mutating func readUInt16BigEndian(_ field: StaticString) throws(DecodeError) -> UInt16 {
        try require(2, field)
        let value = UInt16(bytes[_index]) << 8 | UInt16(bytes[_index &+ 1])
        _index &+= 2
        return value
    }

    @inlinable @inline(__always)
    public mutating func readUInt32BigEndian(_ field: StaticString) throws(DecodeError) -> UInt32 {
        try require(4, field)
        var value: UInt32 = 0
        for i in 0..<4 { value = value << 8 | UInt32(bytes[_index &+ i]) }
        _index &+= 4
        return value
    }

    @inlinable @inline(__always)
    public mutating func readUInt64BigEndian(_ field: StaticString) throws(DecodeError) -> UInt64 {
        try require(8, field)
        var value: UInt64 = 0
        for i in 0..<8 { value = value << 8 | UInt64(bytes[_index &+ i]) }
        _index &+= 8
        return value
    }

    /// Reads `count` bytes as a slice sharing the underlying storage (no copy).
    @inlinable @inline(__always)
    public mutating func readBytes(_ count: Int, _ field: StaticString) throws(DecodeError) -> ArraySlice<UInt8> {
        try require(count, field)
        let slice = bytes[index..<(_index &+ count)]
        _index &+= count
        return slice
    }

    /// Reads every remaining byte (possibly none).
    @inlinable @inline(__always)
    public mutating func readRemaining() -> ArraySlice<UInt8> {
        let slice = bytes[index..<bytes.endIndex]
        _index = bytes.endIndex
        return slice
    }

    @inlinable @inline(__always)
    public mutating func skip(_ count: Int, _ field: StaticString) throws(DecodeError) {
        try require(count, field)
        _index &+= count
    }

    /// Reads a 6-byte device address (little-endian on the wire) of the given type.
    @inlinable @inline(__always)
    public mutating func readAddress(
        type: BluetoothAddress.AddressType, _ field: StaticString
    ) throws(DecodeError) -> BluetoothAddress {
        try require(6, field)
        var value: UInt64 = 0
        for i in 0..<6 { value |= UInt64(bytes[_index &+ i]) << (8 * UInt64(i)) }
        _index &+= 6
        return BluetoothAddress(value: value, type: type)
    }

    /// Fails if any byte is left unread (for fixed-size structures).
    @inlinable
    public func expectEnd(_ field: StaticString) throws(DecodeError) {
        guard isAtEnd else {
            throw DecodeError(.trailingBytes(remainingCount), layer: layer, field: field, offset: offset)
        }
    }

    /// An error located at the current offset.
    @inlinable
    public func error(_ reason: DecodeError.Reason, _ field: StaticString) -> DecodeError {
        DecodeError(reason, layer: layer, field: field, offset: offset)
    }
}
