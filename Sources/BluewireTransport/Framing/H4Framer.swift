import BluewireCore

/// Splits an H4 byte stream (a UART, a TCP or Unix stream to an emulated controller) into HCI
/// packets (Core Vol 4 Part A §2: one packet indicator byte, then the packet with its own header).
///
/// Pure logic, no I/O: feed it whatever a read returned, then take packets until it returns nil.
/// Packets lying whole inside the chunk given to `append` are slices of that chunk (no copy); only a
/// packet split across reads is assembled in a buffer of its own.
///
/// ```swift
/// var framer = H4Framer()
/// framer.append(chunk)
/// while let packet = try framer.nextPacket() { deliver(packet) }
/// ```
///
/// After a framing error the stream has lost packet boundaries: every later call throws the same
/// error.
public struct H4Framer: Sendable {
    /// The largest payload (bytes after the indicator) accepted; larger declared lengths are errors.
    public let maximumPayloadLength: Int

    /// Unconsumed bytes of the latest chunk.
    @usableFromInline var chunk: ArraySlice<UInt8> = []
    /// The start of a packet that straddles chunks (indicator byte included).
    @usableFromInline var partial: [UInt8] = []
    /// Stream offset of the first byte of `partial`, or of `chunk` when `partial` is empty.
    @usableFromInline var offset: Int = 0
    @usableFromInline var failure: H4FramingError?

    /// - Parameter maximumPayloadLength: defaults to the largest ACL packet the header can describe
    ///   (4-byte header + 65,535). Controllers may send ACL packets larger than the buffer size they
    ///   advertise, so only a host that knows better should lower it.
    public init(maximumPayloadLength: Int = 4 + 0xFFFF) {
        self.maximumPayloadLength = maximumPayloadLength
    }

    /// Bytes received that are not yet part of a returned packet.
    public var bufferedByteCount: Int { partial.count + chunk.count }

    /// Stream offset of the next byte that is not yet part of a returned packet.
    public var streamOffset: Int { offset }

    /// Adds bytes read from the stream. Call `nextPacket()` until it returns nil before appending more.
    public mutating func append(_ bytes: [UInt8]) {
        append(bytes[...])
    }

    /// Adds bytes read from the stream (see `append(_:)`).
    public mutating func append(_ bytes: ArraySlice<UInt8>) {
        if chunk.isEmpty {
            chunk = bytes
        } else {
            // The caller appended before draining; keep the order by joining (a copy, but rare).
            chunk = (Array(chunk) + bytes)[...]
        }
    }

    /// The next whole packet, or nil when more bytes are needed.
    public mutating func nextPacket() throws(H4FramingError) -> HCIPacket? {
        if let failure { throw failure }
        do {
            return partial.isEmpty ? try packetFromChunk() : try packetFromPartial()
        } catch {
            failure = error
            throw error
        }
    }

    /// Call at end of stream: throws `.endedMidPacket` when a packet was cut off.
    public mutating func finish() throws(H4FramingError) {
        if let failure { throw failure }
        let pending = partial + chunk
        guard let type = pending.first else { return }
        let expected = (try? Self.totalLength(of: pending[...], maximum: maximumPayloadLength)) ?? nil
        let needed = (expected ?? Self.headerLength(afterIndicator: type) + 1) - pending.count
        let error = H4FramingError(.endedMidPacket(needed: max(needed, 1)), packetType: type, offset: offset)
        failure = error
        throw error
    }

    mutating func packetFromChunk() throws(H4FramingError) -> HCIPacket? {
        guard let total = try Self.totalLength(of: chunk, maximum: maximumPayloadLength, offset: offset) else {
            stashChunk()
            return nil
        }
        guard chunk.count >= total else {
            stashChunk()
            return nil
        }
        let start = chunk.startIndex
        let packet = makePacket(type: chunk[start], payload: chunk[(start + 1)..<(start + total)])
        chunk = chunk[(start + total)...]
        offset += total
        return packet
    }

    mutating func packetFromPartial() throws(H4FramingError) -> HCIPacket? {
        // Complete the header first, then the payload, taking only what this packet needs.
        let headerTotal = Self.headerLength(afterIndicator: partial[0]) + 1
        if partial.count < headerTotal {
            let take = min(headerTotal - partial.count, chunk.count)
            partial.append(contentsOf: chunk.prefix(take))
            chunk = chunk.dropFirst(take)
        }
        guard let total = try Self.totalLength(of: partial[...], maximum: maximumPayloadLength, offset: offset) else {
            return nil
        }
        let take = min(total - partial.count, chunk.count)
        partial.append(contentsOf: chunk.prefix(take))
        chunk = chunk.dropFirst(take)
        guard partial.count == total else { return nil }
        let whole = partial
        partial = []
        offset += total
        return makePacket(type: whole[0], payload: whole[1...])
    }

    mutating func stashChunk() {
        partial.reserveCapacity(64)
        partial.append(contentsOf: chunk)
        chunk = []
    }

    func makePacket(type: UInt8, payload: ArraySlice<UInt8>) -> HCIPacket {
        // totalLength has already rejected unknown types.
        HCIPacket(type: HCIPacketType(rawValue: type) ?? .event, payload: payload)
    }

    /// Header bytes after the indicator for each packet type (0 when the type is unknown).
    static func headerLength(afterIndicator type: UInt8) -> Int {
        switch HCIPacketType(rawValue: type) {
        case .command: 3  // opcode (2), parameter length (1)
        case .acl: 4  // handle + flags (2), data length (2)
        case .sco: 3  // handle + flags (2), data length (1)
        case .event: 2  // event code (1), parameter length (1)
        case .iso: 4  // handle + flags (2), data load length (14 bits)
        case nil: 0
        }
    }

    /// The whole packet's length including the indicator, or nil when the header is incomplete.
    static func totalLength(of bytes: ArraySlice<UInt8>, maximum: Int, offset: Int = 0) throws(H4FramingError) -> Int? {
        guard let type = bytes.first else { return nil }
        guard let kind = HCIPacketType(rawValue: type) else {
            throw H4FramingError(.unknownPacketType, packetType: type, offset: offset)
        }
        let header = headerLength(afterIndicator: type)
        guard bytes.count >= header + 1 else { return nil }
        let s = bytes.startIndex
        let length: Int
        switch kind {
        case .command: length = Int(bytes[s + 3])
        case .acl: length = Int(bytes[s + 3]) | Int(bytes[s + 4]) << 8
        case .sco: length = Int(bytes[s + 3])
        case .event: length = Int(bytes[s + 2])
        // The top two bits of the ISO length field are RFU: a receiver ignores them (Vol 4 Part E §5.4.5).
        case .iso: length = (Int(bytes[s + 3]) | Int(bytes[s + 4]) << 8) & 0x3FFF
        }
        let payload = header + length
        guard payload <= maximum else {
            throw H4FramingError(.lengthTooLarge(declared: payload, maximum: maximum), packetType: type, offset: offset)
        }
        return payload + 1
    }
}
