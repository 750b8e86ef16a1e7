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
