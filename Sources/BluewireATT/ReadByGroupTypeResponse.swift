import BluewireCore

/// The parameters of a Read By Group Type Response (Core Vol 3 Part F §3.4.4.10): a Length octet,
/// then an Attribute Data List of (Attribute Handle, End Group Handle, Attribute Value) triples that are
/// all exactly Length octets. GATT primary service discovery reads services this way (Vol 3 Part G §4.4.1).
public struct ReadByGroupTypeResponse: Hashable, Sendable {
    /// The size of each entry (4 + value length).
    public private(set) var length: UInt8
    /// The raw Attribute Data List.
    public private(set) var attributeDataList: ArraySlice<UInt8>

    /// One group: its declaration handle, the last handle in the group, and the group's value
    /// (for services: the service UUID), as a slice of the PDU.
    public struct Entry: Hashable, Sendable {
        public var handle: UInt16
        public var endGroupHandle: UInt16
        public var value: ArraySlice<UInt8>
        @inlinable public init(handle: UInt16, endGroupHandle: UInt16, value: ArraySlice<UInt8>) {
            self.handle = handle
            self.endGroupHandle = endGroupHandle
            self.value = value
        }
    }

    /// Validates a received list: one or more entries of `length` ≥ 4 octets, and a list size that is
    /// a multiple of `length`. `offset` is where the Length field sits in the PDU.
    public init(length: UInt8, attributeDataList: ArraySlice<UInt8>, offset: Int = 1) throws(DecodeError) {
        guard length >= 4 else {
            throw DecodeError(.invalidValue(UInt64(length)), layer: "att", field: "Length", offset: offset)
        }
        guard !attributeDataList.isEmpty, attributeDataList.count % Int(length) == 0 else {
            throw DecodeError(
                .lengthMismatch(declared: Int(length), actual: attributeDataList.count),
                layer: "att", field: "Attribute Data List", offset: offset + 1)
        }
        self.length = length
        self.attributeDataList = attributeDataList
    }

    /// An empty response to fill with `append(handle:endGroupHandle:value:mtu:)`.
    public init() {
        length = 0
        attributeDataList = []
    }

    /// Appends an entry if this PDU may carry it, returning false when the response is complete.
    /// The first value fixes the length and is truncated to min(ATT_MTU − 6, 251) octets (§3.4.4.10);
    /// later entries must have the same length and fit in the MTU.
    public mutating func append(handle: UInt16, endGroupHandle: UInt16, value: ArraySlice<UInt8>, mtu: Int) -> Bool {
        if attributeDataList.isEmpty {
            let room = Swift.min(mtu - 6, 251)
            guard room >= 0 else { return false }
            let kept = value.prefix(room)
            length = UInt8(truncatingIfNeeded: 4 + kept.count)
            attributeDataList.reserveCapacity(mtu - 2)
            appendUInt16(handle)
            appendUInt16(endGroupHandle)
            attributeDataList.append(contentsOf: kept)
            return true
        }
        guard value.count + 4 == Int(length), 2 + attributeDataList.count + Int(length) <= mtu else { return false }
        appendUInt16(handle)
        appendUInt16(endGroupHandle)
        attributeDataList.append(contentsOf: value)
        return true
    }

    private mutating func appendUInt16(_ value: UInt16) {
        attributeDataList.append(UInt8(truncatingIfNeeded: value))
        attributeDataList.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    /// Whether no entry has been appended yet.
    @inlinable public var isEmpty: Bool { attributeDataList.isEmpty }

    /// The entries, in order, without copying.
    @inlinable public var entries: Entries { Entries(list: attributeDataList, length: Int(length)) }

    /// A non-allocating iterator over the Attribute Data List.
    public struct Entries: Sequence, IteratorProtocol, Sendable {
        @usableFromInline let list: ArraySlice<UInt8>
        @usableFromInline let length: Int
        @usableFromInline var index: Int

        @inlinable init(list: ArraySlice<UInt8>, length: Int) {
            self.list = list
            self.length = length
            self.index = list.startIndex
        }

        @inlinable
        public mutating func next() -> Entry? {
            guard length >= 4, list.endIndex - index >= length else { return nil }
            let handle = UInt16(list[index]) | UInt16(list[index + 1]) << 8
            let end = UInt16(list[index + 2]) | UInt16(list[index + 3]) << 8
            let value = list[(index + 4)..<(index + length)]
            index += length
            return Entry(handle: handle, endGroupHandle: end, value: value)
        }
    }
}
