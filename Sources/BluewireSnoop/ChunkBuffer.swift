/// The bytes of a stream fed in chunks, viewed one unit (header, record, block) at a time.
///
/// A unit that lies inside the current chunk is returned as a slice of it, without copying. Only a unit
/// that straddles two chunks is copied, into `carry`, which therefore never holds more than one
/// (partial) unit: memory stays constant whatever the size of the file.
struct ChunkBuffer: Sendable {
    private var chunk: ArraySlice<UInt8> = []
    private var position: Int = 0
    /// The start of the current unit when it straddles chunks (always a unit's first bytes).
    private var carry: [UInt8] = []
    /// File offset of the first byte of the current unit.
    private(set) var fileOffset: Int = 0

    /// Bytes held from the current unit's start to the end of what was fed.
    var availableCount: Int { carry.count + (chunk.endIndex - position) }

    /// Adds the next chunk; unconsumed bytes of the previous one are kept.
    mutating func append(_ next: ArraySlice<UInt8>) {
        if position < chunk.endIndex {
            carry.append(contentsOf: chunk[position...])
        }
        chunk = next
        position = next.startIndex
    }

    /// The first `count` bytes of the current unit, or nil until that many have been fed.
    mutating func peek(_ count: Int) -> ArraySlice<UInt8>? {
        if carry.isEmpty {
            guard chunk.endIndex &- position >= count else { return nil }
            return chunk[position..<(position &+ count)]
        }
        if carry.count < count {
            let take = min(count &- carry.count, chunk.endIndex &- position)
            carry.append(contentsOf: chunk[position..<(position &+ take)])
            position &+= take
            if carry.count < count { return nil }
        }
        return carry[0..<count]
    }

    /// Moves past the current unit, which must have been seen whole through `peek(count)`.
    mutating func consume(_ count: Int) {
        fileOffset &+= count
        if carry.isEmpty {
            position &+= count
        } else if count >= carry.count {
            // Dropping the array (rather than emptying it in place) leaves records that still
            // reference its storage untouched and avoids a copy-on-write.
            carry = []
        } else {
            carry.removeFirst(count)
        }
    }
}
