import BluewireCore

/// The Packet_Boundary_Flag of an HCI ACL Data packet (Core Vol 4 Part E §5.4.2).
///
/// Host to controller on LE, the first fragment of an L2CAP PDU must be `firstNonFlushable` and the
/// rest `continuingFragment`; controllers send `firstFlushable` for the first fragment they deliver.
public enum ACLPacketBoundaryFlag: UInt8, Hashable, Sendable, CaseIterable {
    /// 0b00: first fragment of a non-automatically-flushable L2CAP PDU (host to controller).
    case firstNonFlushable = 0b00
    /// 0b01: continuing fragment of a higher-layer message.
    case continuingFragment = 0b01
    /// 0b10: first fragment of an automatically flushable L2CAP PDU.
    case firstFlushable = 0b10
    /// 0b11: a complete automatically flushable L2CAP PDU (deprecated; not used on LE).
    case completeFlushable = 0b11

    /// Whether this packet starts an L2CAP PDU.
    @inlinable public var isStart: Bool { self != .continuingFragment }
}

/// The Broadcast_Flag of an HCI ACL Data packet (Core Vol 4 Part E §5.4.2).
public enum ACLBroadcastFlag: UInt8, Hashable, Sendable, CaseIterable {
    /// 0b00: point-to-point (the only value used on LE).
    case pointToPoint = 0b00
    /// 0b01: BR/EDR broadcast.
    case brEdrBroadcast = 0b01
    /// 0b10: reserved.
    case reserved2 = 0b10
    /// 0b11: reserved.
    case reserved3 = 0b11
}

/// The 4-octet header of an HCI ACL Data packet (Core Vol 4 Part E §5.4.2): a 12-bit Connection_Handle,
/// the PB and BC flags in the top 4 bits, and Data_Total_Length.
public struct ACLHeader: Hashable, Sendable {
    /// Connection_Handle, 0x0000–0x0EFF (12 bits).
    public var handle: UInt16
    public var packetBoundary: ACLPacketBoundaryFlag
    public var broadcast: ACLBroadcastFlag
    /// Data_Total_Length: the number of data octets that follow.
    public var dataLength: UInt16

    /// The header size on the wire.
    public static let size = 4

    @inlinable
    public init(
        handle: UInt16, packetBoundary: ACLPacketBoundaryFlag,
        broadcast: ACLBroadcastFlag = .pointToPoint, dataLength: UInt16
    ) {
        self.handle = handle & 0x0FFF
        self.packetBoundary = packetBoundary
        self.broadcast = broadcast
        self.dataLength = dataLength
    }

    /// Reads the header (4 octets) from `reader`.
    @inlinable
    public init(from reader: inout ByteReader) throws(DecodeError) {
        let first = try reader.readUInt16("Handle")
        let length = try reader.readUInt16("Data_Total_Length")
        handle = first & 0x0FFF
        // Two bits each: every value of the enums is defined, so these cannot fail.
        packetBoundary = ACLPacketBoundaryFlag(rawValue: UInt8((first >> 12) & 0b11)) ?? .continuingFragment
        broadcast = ACLBroadcastFlag(rawValue: UInt8((first >> 14) & 0b11)) ?? .pointToPoint
        dataLength = length
    }

    /// Appends the 4 header octets.
    @inlinable
    public func encode(into w: inout ByteWriter) {
        w.append((handle & 0x0FFF) | UInt16(packetBoundary.rawValue) << 12 | UInt16(broadcast.rawValue) << 14)
        w.append(dataLength)
    }
}

/// One HCI ACL Data packet (Core Vol 4 Part E §5.4.2): header and data. `data` is a slice of the
/// received bytes.
public struct ACLPacket: Hashable, Sendable {
    public var header: ACLHeader
    public var data: ArraySlice<UInt8>

    @inlinable public var handle: UInt16 { header.handle }
    @inlinable public var packetBoundary: ACLPacketBoundaryFlag { header.packetBoundary }

    /// A packet carrying `data`; the header's length is set from it.
    @inlinable
    public init(
        handle: UInt16, packetBoundary: ACLPacketBoundaryFlag,
        broadcast: ACLBroadcastFlag = .pointToPoint, data: ArraySlice<UInt8>
    ) {
        header = ACLHeader(
            handle: handle, packetBoundary: packetBoundary, broadcast: broadcast,
            dataLength: UInt16(truncatingIfNeeded: data.count))
        self.data = data
    }

    /// Decodes an ACL packet (the bytes after the H4 indicator). Fails on a truncated header or when
    /// Data_Total_Length does not equal the number of data octets present (layer "hci").
    @inlinable
    public init(decoding bytes: ArraySlice<UInt8>) throws(DecodeError) {
        var reader = ByteReader(bytes, layer: "hci")
        header = try ACLHeader(from: &reader)
        guard reader.remainingCount == Int(header.dataLength) else {
            throw DecodeError(
                .lengthMismatch(declared: Int(header.dataLength), actual: reader.remainingCount),
                layer: "hci", field: "Data_Total_Length", offset: 2)
        }
        data = reader.readRemaining()
    }

    @inlinable
    public init(decoding bytes: [UInt8]) throws(DecodeError) {
        try self.init(decoding: bytes[...])
    }

    /// The packet's wire form (without the H4 indicator).
    @inlinable
    public func encode() -> [UInt8] {
        var w = ByteWriter(capacity: ACLHeader.size + data.count)
        header.encode(into: &w)
        w.append(contentsOf: data)
        return w.bytes
    }
}
