import BluewireCore

/// Encodes HCI packets as a btsnoop version 1 file with datalink 1002 (HCI UART, H4).
///
/// Sans-I/O: it appends bytes to a buffer the caller owns and writes wherever it likes. Each record's
/// flags follow the btsnoop definition for H4: bit 0 is the direction (set when the packet came from the
/// controller) and bit 1 is set for commands and events, so that tools that look only at the flags
/// (rather than the H4 byte) still classify packets correctly.
public struct BTSnoopWriter: Sendable {
    /// Size of the btsnoop file header.
    public static let fileHeaderLength = 16
    /// Size of each record header before the packet bytes.
    public static let recordHeaderLength = 24

    public init() {}

    /// The 16-byte file header: `btsnoop\0`, version 1, datalink 1002, all big-endian.
    public var fileHeader: [UInt8] {
        var out: [UInt8] = []
        appendFileHeader(to: &out)
        return out
    }

    /// Appends the file header to `buffer`.
    public func appendFileHeader(to buffer: inout [UInt8]) {
        buffer.append(contentsOf: CaptureFormat.btsnoopMagic)
        BTSnoopWriter.appendBigEndian(1, to: &buffer)
        BTSnoopWriter.appendBigEndian(BTSnoopDatalink.h4.rawValue, to: &buffer)
    }

    /// The btsnoop 1002 flags for a packet: bit 0 direction, bit 1 command/event.
    @inlinable
    public static func flags(for type: HCIPacketType, direction: PacketDirection) -> UInt32 {
        let received: UInt32 = direction == .controllerToHost ? 1 : 0
        let commandOrEvent: UInt32 = type == .command || type == .event ? 2 : 0
        return received | commandOrEvent
    }

    /// Appends one record holding `packet` (its H4 byte, then its payload).
    ///
    /// - Parameters:
    ///   - timestamp: microseconds since 0000-01-01 as btsnoop counts them (see `timestamp(unixMicroseconds:)`).
    ///   - originalLength: the packet's length before any truncation, H4 byte included; defaults to the
    ///     included length.
    ///   - drops: the cumulative count of packets lost before this one.
    public func appendRecord(
        _ packet: HCIPacket, direction: PacketDirection, timestamp: Int64,
        originalLength: UInt32? = nil, drops: UInt32 = 0, to buffer: inout [UInt8]
    ) {
        let included = UInt32(truncatingIfNeeded: packet.payload.count &+ 1)
        BTSnoopWriter.appendBigEndian(originalLength ?? included, to: &buffer)
        BTSnoopWriter.appendBigEndian(included, to: &buffer)
        BTSnoopWriter.appendBigEndian(BTSnoopWriter.flags(for: packet.type, direction: direction), to: &buffer)
        BTSnoopWriter.appendBigEndian(drops, to: &buffer)
        let time = UInt64(bitPattern: timestamp)
        BTSnoopWriter.appendBigEndian(UInt32(truncatingIfNeeded: time >> 32), to: &buffer)
        BTSnoopWriter.appendBigEndian(UInt32(truncatingIfNeeded: time), to: &buffer)
        buffer.append(packet.type.rawValue)
        buffer.append(contentsOf: packet.payload)
    }

    /// One record as a new array.
    public func record(
        _ packet: HCIPacket, direction: PacketDirection, timestamp: Int64,
        originalLength: UInt32? = nil, drops: UInt32 = 0
    ) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(BTSnoopWriter.recordHeaderLength + packet.payload.count + 1)
        appendRecord(packet, direction: direction, timestamp: timestamp, originalLength: originalLength,
                     drops: drops, to: &out)
        return out
    }

    /// A btsnoop timestamp from Unix time in microseconds.
    @inlinable
    public static func timestamp(unixMicroseconds: Int64) -> Int64 {
        unixMicroseconds &+ CaptureFormat.btsnoopEpochOffset
    }

    static func appendBigEndian(_ value: UInt32, to buffer: inout [UInt8]) {
        buffer.append(UInt8(truncatingIfNeeded: value >> 24))
        buffer.append(UInt8(truncatingIfNeeded: value >> 16))
        buffer.append(UInt8(truncatingIfNeeded: value >> 8))
        buffer.append(UInt8(truncatingIfNeeded: value))
    }
}
