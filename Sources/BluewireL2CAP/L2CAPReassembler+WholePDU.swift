import BluewireCore
import BluewireHCI

extension L2CAPReassembler {
    /// The commonest ACL packet, read straight from its bytes (the packet after the H4 indicator):
    /// one that holds a whole L2CAP PDU (Core Vol 3 Part A §3.1) while no PDU is partly received on
    /// any handle. It is the PDU `receive(_:)` would return for that packet, a slice of `bytes`, with
    /// no `ACLPacket` and no `L2CAPReassemblyResult` made and nothing to change here; nil for every
    /// other packet (a fragment, a malformed header, a length that disagrees, a PDU over
    /// `maximumPDUSize`, a partial PDU pending), which the caller then decodes with
    /// `ACLPacket(decoding:)` and gives to `receive(_:)` as usual.
    ///
    /// The same checks in the same order as those two: the ACL header's Data_Total_Length equals the
    /// octets present (Core Vol 4 Part E §5.4.2), the Packet_Boundary_Flag starts a PDU, and the Basic
    /// L2CAP header's length accounts for every data octet.
    @inlinable
    public func wholePDU(inPacket bytes: ArraySlice<UInt8>) -> L2CAPPDU? {
        guard partials.isEmpty, bytes.count >= ACLHeader.size + L2CAPBasicHeader.size else { return nil }
        let s = bytes.startIndex
        let first = UInt16(bytes[s]) | UInt16(bytes[s + 1]) << 8
        let dataLength = Int(UInt16(bytes[s + 2]) | UInt16(bytes[s + 3]) << 8)
        // 0b01 is a continuing fragment; 0b00, 0b10 and 0b11 start a PDU.
        guard bytes.count - ACLHeader.size == dataLength, (first >> 12) & 0b11 != 0b01 else { return nil }
        let total = Int(UInt16(bytes[s + 4]) | UInt16(bytes[s + 5]) << 8) + L2CAPBasicHeader.size
        guard total == dataLength, total <= maximumPDUSize else { return nil }
        let channel = L2CAPChannelID(UInt16(bytes[s + 6]) | UInt16(bytes[s + 7]) << 8)
        return L2CAPPDU(
            handle: first & 0x0FFF, channelID: channel, payload: bytes[(s + ACLHeader.size + L2CAPBasicHeader.size)...])
    }
}
