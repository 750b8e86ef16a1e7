import BluewireCore

/// The parameters of a Find By Type Value Response (Core Vol 3 Part F §3.4.3.4): a Handles Information
/// List of (Found Attribute Handle, Group End Handle) pairs, 4 octets each. GATT discovers a primary
/// service by its UUID this way (Vol 3 Part G §4.4.2).
public struct FindByTypeValueResponse: Hashable, Sendable {
    /// The raw Handles Information List.
    public private(set) var handlesInformationList: ArraySlice<UInt8>

    /// One match: the attribute found and the end of its group (equal to it for non-grouping types).
    public struct Entry: Hashable, Sendable {
        public var foundAttributeHandle: UInt16
        public var groupEndHandle: UInt16
        @inlinable public init(foundAttributeHandle: UInt16, groupEndHandle: UInt16) {
            self.foundAttributeHandle = foundAttributeHandle
            self.groupEndHandle = groupEndHandle
        }
    }

    /// Validates a received list: one or more 4-octet pairs. `offset` is where the list starts.
    public init(handlesInformationList: ArraySlice<UInt8>, offset: Int = 1) throws(DecodeError) {
        guard !handlesInformationList.isEmpty, handlesInformationList.count % 4 == 0 else {
            throw DecodeError(
                .lengthMismatch(declared: 4, actual: handlesInformationList.count),
                layer: "att", field: "Handles Information List", offset: offset)
        }
        self.handlesInformationList = handlesInformationList
    }

    /// An empty response to fill with `append(foundAttributeHandle:groupEndHandle:mtu:)`.
    public init() { handlesInformationList = [] }

    /// Appends a pair if it fits in ATT_MTU, returning false when the response is complete.
    public mutating func append(foundAttributeHandle: UInt16, groupEndHandle: UInt16, mtu: Int) -> Bool {
        guard 1 + handlesInformationList.count + 4 <= mtu else { return false }
        handlesInformationList.append(UInt8(truncatingIfNeeded: foundAttributeHandle))
        handlesInformationList.append(UInt8(truncatingIfNeeded: foundAttributeHandle >> 8))
        handlesInformationList.append(UInt8(truncatingIfNeeded: groupEndHandle))
        handlesInformationList.append(UInt8(truncatingIfNeeded: groupEndHandle >> 8))
        return true
    }

    /// Whether no pair has been appended yet.
    @inlinable public var isEmpty: Bool { handlesInformationList.isEmpty }

    /// The pairs, in order, without allocating.
    @inlinable public var entries: Entries { Entries(list: handlesInformationList) }

    /// A non-allocating iterator over the Handles Information List.
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
            let found = UInt16(list[index]) | UInt16(list[index + 1]) << 8
            let end = UInt16(list[index + 2]) | UInt16(list[index + 3]) << 8
            index += 4
            return Entry(foundAttributeHandle: found, groupEndHandle: end)
        }
    }
}
