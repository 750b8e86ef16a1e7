import BluewireCore
import BluewireHCI

/// Splits outgoing L2CAP PDUs into HCI ACL Data packets no larger than the controller's buffer
/// (LE Read Buffer Size's LE_ACL_Data_Packet_Length, Core Vol 4 Part E §7.8.2).
///
/// On LE the host marks the first fragment "first non-automatically-flushable" (PB 0b00) and the
/// rest "continuing" (PB 0b01), Vol 4 Part E §5.4.2.
public struct L2CAPFragmenter: Hashable, Sendable {
    /// Maximum data octets per ACL packet the controller accepts.
    public let bufferSize: Int

    /// `bufferSize` below 1 is treated as 1 (a controller reporting 0 would be unusable anyway;
    /// LE controllers report at least 27).
    public init(bufferSize: Int) {
        self.bufferSize = Swift.max(1, bufferSize)
    }

    /// The ACL packets carrying one B-frame (header and payload) on `handle`. All packets share one
    /// buffer holding the frame.
    public func fragment(handle: UInt16, channelID: L2CAPChannelID, payload: ArraySlice<UInt8>) -> [ACLPacket] {
        var w = ByteWriter(capacity: L2CAPBasicHeader.size + payload.count)
        L2CAPBasicFrame(channelID: channelID, payload: payload).encode(into: &w)
        return fragment(handle: handle, frame: w.bytes[...])
    }

    /// The ACL packets carrying an already encoded B-frame on `handle`.
    public func fragment(handle: UInt16, frame: ArraySlice<UInt8>) -> [ACLPacket] {
        var packets: [ACLPacket] = []
        packets.reserveCapacity((frame.count + bufferSize - 1) / bufferSize)
        var start = frame.startIndex
        repeat {
            let end = Swift.min(start + bufferSize, frame.endIndex)
            packets.append(ACLPacket(
                handle: handle,
                packetBoundary: start == frame.startIndex ? .firstNonFlushable : .continuingFragment,
                data: frame[start..<end]))
            start = end
        } while start < frame.endIndex
        return packets
    }
}

extension L2CAPFragmenter {
    /// The packets of `fragment(handle:channelID:payload:)` in wire form, handed to `body` one at a
    /// time: each packet's ACL header, its share of the L2CAP header and of `payload` are written
    /// into one array, which is all a packet allocates (no frame buffer, no array of packets, no
    /// encoding when it is sent).
    public func forEachWirePacket(
        handle: UInt16, channelID: L2CAPChannelID, payload: ArraySlice<UInt8>, _ body: (ACLWirePacket) -> Void
    ) {
        let length = UInt16(truncatingIfNeeded: payload.count)
        let header = (UInt8(truncatingIfNeeded: length), UInt8(truncatingIfNeeded: length >> 8),
                      UInt8(truncatingIfNeeded: channelID.rawValue), UInt8(truncatingIfNeeded: channelID.rawValue >> 8))
        let headerSize = L2CAPBasicHeader.size
        let total = headerSize + payload.count
        var start = 0
        repeat {
            let end = Swift.min(start + bufferSize, total)
            var w = Self.wirePacketWriter(handle: handle, isFirst: start == 0, dataLength: end - start)
            // A buffer smaller than the L2CAP header splits even the header (bufferSize may be 1).
            var offset = start
            while offset < Swift.min(end, headerSize) {
                switch offset {
                case 0: w.append(header.0)
                case 1: w.append(header.1)
                case 2: w.append(header.2)
                default: w.append(header.3)
                }
                offset += 1
            }
            if end > headerSize {
                let from = payload.startIndex + Swift.max(start, headerSize) - headerSize
                w.append(contentsOf: payload[from..<(payload.startIndex + end - headerSize)])
            }
            body(ACLWirePacket(encoded: w.bytes))
            start = end
        } while start < total
    }

    /// The packets of `fragment(handle:frame:)` in wire form, handed to `body` one at a time, each
    /// in one array.
    public func forEachWirePacket(handle: UInt16, frame: ArraySlice<UInt8>, _ body: (ACLWirePacket) -> Void) {
        var start = frame.startIndex
        repeat {
            let end = Swift.min(start + bufferSize, frame.endIndex)
            var w = Self.wirePacketWriter(handle: handle, isFirst: start == frame.startIndex, dataLength: end - start)
            w.append(contentsOf: frame[start..<end])
            body(ACLWirePacket(encoded: w.bytes))
            start = end
        } while start < frame.endIndex
    }

    /// A writer sized for one packet of `dataLength` data octets, its ACL header written (first
    /// non-flushable or continuing, Vol 4 Part E §5.4.2): for a caller that writes a whole PDU that
    /// fits the buffer straight into its packet (the engine's notification path).
    package static func wirePacketWriter(handle: UInt16, isFirst: Bool, dataLength: Int) -> ByteWriter {
        var w = ByteWriter(capacity: ACLHeader.size + dataLength)
        ACLHeader(handle: handle, packetBoundary: isFirst ? .firstNonFlushable : .continuingFragment,
                  dataLength: UInt16(truncatingIfNeeded: dataLength)).encode(into: &w)
        return w
    }
}
