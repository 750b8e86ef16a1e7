import BluewireCore

/// The parameters of a Multiple Handle Value Notification (Core Vol 3 Part F §3.4.7.4): a Handle Length
/// Value Tuple List of (Attribute Handle, Value Length, Attribute Value), two or more tuples.
public struct MultipleHandleValueNotification: Hashable, Sendable {
    /// The raw Handle Length Value Tuple List.
    public private(set) var handleLengthValueTupleList: ArraySlice<UInt8>

    /// One notified attribute; `value` is a slice of the PDU.
    public struct Entry: Hashable, Sendable {
        public var handle: UInt16
        public var value: ArraySlice<UInt8>
        @inlinable public init(handle: UInt16, value: ArraySlice<UInt8>) {
            self.handle = handle
            self.value = value
        }
    }

    /// Validates a received list: every tuple complete (4-octet header, then exactly Value Length
    /// octets). `offset` is where the list starts in the PDU.
    public init(handleLengthValueTupleList list: ArraySlice<UInt8>, offset: Int = 1) throws(DecodeError) {
        var reader = ByteReader(list, layer: "att")
        guard !list.isEmpty else {
            throw DecodeError(.truncated(needed: 4, available: 0), layer: "att",
                              field: "Handle Length Value Tuple List", offset: offset)
        }
        while !reader.isAtEnd {
            do {
                _ = try reader.readUInt16("Attribute Handle")
                let length = try reader.readUInt16("Value Length")
                try reader.skip(Int(length), "Attribute Value")
            } catch {
                throw error.relocated(by: offset)
            }
        }
        handleLengthValueTupleList = list
    }

    /// An empty notification to fill with `append(handle:value:mtu:)`.
    public init() { handleLengthValueTupleList = [] }

    /// Appends a tuple if it fits whole in ATT_MTU, returning false otherwise.
    public mutating func append(handle: UInt16, value: ArraySlice<UInt8>, mtu: Int) -> Bool {
        guard 1 + handleLengthValueTupleList.count + 4 + value.count <= mtu else { return false }
        let length = UInt16(truncatingIfNeeded: value.count)
        handleLengthValueTupleList.append(UInt8(truncatingIfNeeded: handle))
        handleLengthValueTupleList.append(UInt8(truncatingIfNeeded: handle >> 8))
        handleLengthValueTupleList.append(UInt8(truncatingIfNeeded: length))
        handleLengthValueTupleList.append(UInt8(truncatingIfNeeded: length >> 8))
        handleLengthValueTupleList.append(contentsOf: value)
        return true
    }

    /// The tuples, in order, without allocating.
    @inlinable public var entries: Entries { Entries(list: handleLengthValueTupleList) }

    /// A non-allocating iterator over the Handle Length Value Tuple List.
    public struct Entries: Sequence, IteratorProtocol, Sendable {
        @usableFromInline let list: ArraySlice<UInt8>
        @usableFromInline var index: Int

        @inlinable init(list: ArraySlice<UInt8>) {
            self.list = list
            self.index = list.startIndex
        }

        @inlinable
        public mutating func next() -> Entry? {
            guard list.endIndex - index >= 4 else { return nil }
            let handle = UInt16(list[index]) | UInt16(list[index + 1]) << 8
            let length = Int(UInt16(list[index + 2]) | UInt16(list[index + 3]) << 8)
            let start = index + 4
            guard list.endIndex - start >= length else { return nil }
            index = start + length
            return Entry(handle: handle, value: list[start..<index])
        }
    }
}
