import BluewireCore
import BluewireHCI

extension L2CAPFragmenter {
    /// The octets a payload's encoder leaves in front of it for
    /// `forEachWirePacket(handle:channelID:headroomed:_:)`: the ACL header (Core Vol 4 Part E
    /// §5.4.2) and the L2CAP basic header (Vol 3 Part A §3.1), 4 octets each.
    public static let headroom = ACLHeader.size + L2CAPBasicHeader.size

    /// The packets of a B-frame whose payload is `buffer` after its first `headroom` octets, which
    /// its encoder reserved (`ATTBearer(headroom:)`). When the frame fits one packet, the commonest
    /// case, both headers are written into those octets and `buffer` itself becomes the packet:
    /// the payload is encoded once and never copied. A longer frame is fragmented as
    /// `forEachWirePacket(handle:channelID:payload:_:)` does. A `buffer` shorter than `headroom`
    /// carries an empty payload.
    public func forEachWirePacket(
        handle: UInt16, channelID: L2CAPChannelID, headroomed buffer: inout [UInt8], _ body: (ACLWirePacket) -> Void
    ) {
        let headroom = Self.headroom
        let payloadLength = Swift.max(buffer.count - headroom, 0)
        let frameLength = L2CAPBasicHeader.size + payloadLength
        guard buffer.count >= headroom, frameLength <= bufferSize else {
            return forEachWirePacket(
                handle: handle, channelID: channelID, payload: buffer[Swift.min(headroom, buffer.count)...], body)
        }
        // First (and only) fragment, not automatically flushable, point to point (Vol 4 Part E §5.4.2).
        let first = (handle & 0x0FFF) | UInt16(ACLPacketBoundaryFlag.firstNonFlushable.rawValue) << 12
        buffer[0] = UInt8(truncatingIfNeeded: first)
        buffer[1] = UInt8(truncatingIfNeeded: first >> 8)
        buffer[2] = UInt8(truncatingIfNeeded: frameLength)
        buffer[3] = UInt8(truncatingIfNeeded: frameLength >> 8)
        buffer[4] = UInt8(truncatingIfNeeded: payloadLength)
        buffer[5] = UInt8(truncatingIfNeeded: payloadLength >> 8)
        buffer[6] = UInt8(truncatingIfNeeded: channelID.rawValue)
        buffer[7] = UInt8(truncatingIfNeeded: channelID.rawValue >> 8)
        body(ACLWirePacket(encoded: buffer))
    }
}
