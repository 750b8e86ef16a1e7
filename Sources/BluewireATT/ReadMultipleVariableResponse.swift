import BluewireCore

/// The parameters of a Read Multiple Variable Response (Core Vol 3 Part F §3.4.4.12): a Length Value
/// Tuple List of (Value Length, Attribute Value) pairs.
///
/// The specification lets the server cut the list at ATT_MTU − 1 octets, so the last value may be
/// shorter than its Value Length says (and a trailing single octet of a cut length field is possible).
/// Decoding therefore accepts any list; `Entry.isTruncated` marks a value that was cut.
public struct ReadMultipleVariableResponse: Hashable, Sendable {
    /// The raw Length Value Tuple List.
    public private(set) var lengthValueTupleList: ArraySlice<UInt8>

    /// One attribute value and the length the server declared for it.
    public struct Entry: Hashable, Sendable {
        public var valueLength: UInt16
        public var value: ArraySlice<UInt8>
        /// Whether the value was cut short by ATT_MTU (only the last entry can be).
        @inlinable public var isTruncated: Bool { value.count < Int(valueLength) }
        @inlinable public init(valueLength: UInt16, value: ArraySlice<UInt8>) {
            self.valueLength = valueLength
            self.value = value
        }
    }

    /// Wraps a received list (every list is acceptable, see the type's documentation).
    public init(lengthValueTupleList: ArraySlice<UInt8>) {
        self.lengthValueTupleList = lengthValueTupleList
    }

    /// An empty response to fill with `append(value:mtu:)`.
    public init() { lengthValueTupleList = [] }

    /// Appends a value, cutting it (and then returning false: the response is complete) where the
    /// PDU would exceed ATT_MTU, as §3.4.4.12 requires. Returns false without appending when not even
    /// the length field fits.
    public mutating func append(value: ArraySlice<UInt8>, mtu: Int) -> Bool {
        let room = mtu - 1 - lengthValueTupleList.count
        guard room >= 2 else { return false }
        let length = UInt16(truncatingIfNeeded: value.count)
        lengthValueTupleList.append(UInt8(truncatingIfNeeded: length))
        lengthValueTupleList.append(UInt8(truncatingIfNeeded: length >> 8))
        let kept = value.prefix(room - 2)
        lengthValueTupleList.append(contentsOf: kept)
        return kept.count == value.count
    }

    /// The tuples, in order, without allocating.
    @inlinable public var entries: Entries { Entries(list: lengthValueTupleList) }

    /// A non-allocating iterator over the Length Value Tuple List.
    public struct Entries: Sequence, IteratorProtocol, Sendable {
        @usableFromInline let list: ArraySlice<UInt8>
        @usableFromInline var index: Int

        @inlinable init(list: ArraySlice<UInt8>) {
            self.list = list
            self.index = list.startIndex
        }

        @inlinable
        public mutating func next() -> Entry? {
            guard list.endIndex - index >= 2 else { return nil }
            let length = UInt16(list[index]) | UInt16(list[index + 1]) << 8
            let start = index + 2
            let end = Swift.min(start + Int(length), list.endIndex)
            index = end
            return Entry(valueLength: length, value: list[start..<end])
        }
    }
}
