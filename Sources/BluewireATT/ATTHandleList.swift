import BluewireCore

/// The Set Of Handles of a Read Multiple Request (Core Vol 3 Part F §3.4.4.7) or Read Multiple
/// Variable Request (§3.4.4.11): two or more 16-bit attribute handles.
public struct ATTHandleList: Hashable, Sendable, Sequence {
    /// The raw little-endian handles.
    public private(set) var bytes: ArraySlice<UInt8>

    /// Validates a received set: an even number of octets holding at least two handles (the
    /// specification requires "two or more"). `offset` is where the set starts in the PDU.
    public init(validating bytes: ArraySlice<UInt8>, offset: Int = 1) throws(DecodeError) {
        guard bytes.count % 2 == 0 else {
            throw DecodeError(.lengthMismatch(declared: 2, actual: bytes.count),
                              layer: "att", field: "Set Of Handles", offset: offset)
        }
        guard bytes.count >= 4 else {
            throw DecodeError(.truncated(needed: 4, available: bytes.count),
                              layer: "att", field: "Set Of Handles", offset: offset)
        }
        self.bytes = bytes
    }

    /// A set built from handles (a client building its request).
    public init<S: Sequence>(_ handles: S) where S.Element == UInt16 {
        var out: [UInt8] = []
        for handle in handles {
            out.append(UInt8(truncatingIfNeeded: handle))
            out.append(UInt8(truncatingIfNeeded: handle >> 8))
        }
        bytes = out[...]
    }

    /// How many handles the set holds.
    @inlinable public var count: Int { bytes.count / 2 }

    @inlinable public func makeIterator() -> Iterator { Iterator(list: bytes) }

    /// A non-allocating iterator over the handles.
    public struct Iterator: IteratorProtocol, Sendable {
        @usableFromInline let list: ArraySlice<UInt8>
        @usableFromInline var index: Int

        @inlinable init(list: ArraySlice<UInt8>) {
            self.list = list
            self.index = list.startIndex
        }

        @inlinable
        public mutating func next() -> UInt16? {
            guard list.endIndex - index >= 2 else { return nil }
            let handle = UInt16(list[index]) | UInt16(list[index + 1]) << 8
            index += 2
            return handle
        }
    }
}
