import BluewireCore

/// The parameters of a Read By Type Response (Core Vol 3 Part F §3.4.4.2): a Length octet, then an
/// Attribute Data List of (Attribute Handle, Attribute Value) pairs that are all exactly Length octets.
///
/// The list stays a slice of the received PDU; `entries` walks it without allocating.
public struct ReadByTypeResponse: Hashable, Sendable {
    /// The size of each attribute handle–value pair (2 + value length).
    public private(set) var length: UInt8
    /// The raw Attribute Data List.
    public private(set) var attributeDataList: ArraySlice<UInt8>

    /// One (Attribute Handle, Attribute Value) pair; `value` is a slice of the PDU.
    public struct Entry: Hashable, Sendable {
        public var handle: UInt16
        public var value: ArraySlice<UInt8>
        @inlinable public init(handle: UInt16, value: ArraySlice<UInt8>) {
            self.handle = handle
            self.value = value
        }
    }

    /// Validates a received list. The list must hold one or more pairs of `length` ≥ 2 octets and its
    /// size must be a multiple of `length`; `offset` is where the Length field sits in the PDU.
    public init(length: UInt8, attributeDataList: ArraySlice<UInt8>, offset: Int = 1) throws(DecodeError) {
        guard length >= 2 else {
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

    /// An empty response to fill with `append(handle:value:mtu:)` (a server building its answer).
    public init() {
        length = 0
        attributeDataList = []
    }

    /// Appends a pair if the specification allows it in this PDU, returning false if not (then the
    /// response is complete). The first value fixes the length and is truncated to
    /// min(ATT_MTU − 4, 253) octets as §3.4.4.2 requires; later values must have that same length and
    /// fit in the MTU (§4.8.2: the server stops at the first attribute of a different length).
    public mutating func append(handle: UInt16, value: ArraySlice<UInt8>, mtu: Int) -> Bool {
        if attributeDataList.isEmpty {
            let room = Swift.min(mtu - 4, 253)
            guard room >= 0 else { return false }
            let kept = value.prefix(room)
            length = UInt8(truncatingIfNeeded: 2 + kept.count)
            attributeDataList.reserveCapacity(mtu - 2)
            appendHandle(handle)
            attributeDataList.append(contentsOf: kept)
            return true
        }
        guard value.count + 2 == Int(length), 2 + attributeDataList.count + Int(length) <= mtu else { return false }
        appendHandle(handle)
        attributeDataList.append(contentsOf: value)
        return true
    }

    private mutating func appendHandle(_ handle: UInt16) {
        attributeDataList.append(UInt8(truncatingIfNeeded: handle))
        attributeDataList.append(UInt8(truncatingIfNeeded: handle >> 8))
    }

    /// Whether no pair has been appended yet.
    @inlinable public var isEmpty: Bool { attributeDataList.isEmpty }

    /// The pairs, in order, without copying.
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
            guard length >= 2, list.endIndex - index >= length else { return nil }
            let handle = UInt16(list[index]) | UInt16(list[index + 1]) << 8
            let value = list[(index + 2)..<(index + length)]
            index += length
            return Entry(handle: handle, value: value)
        }
    }
}
