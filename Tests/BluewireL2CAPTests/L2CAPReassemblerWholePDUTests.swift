import BluewireCore
import BluewireHCI
import BluewireL2CAP
import Testing

/// `L2CAPReassembler.wholePDU(inPacket:)`, the receive fast path, against the full rules it stands in
/// for: for every packet it takes, the PDU is exactly what `ACLPacket(decoding:)` then `receive(_:)`
/// gives; every packet it declines goes that way instead, so nothing is lost or changed.
@Suite("L2CAP reassembler: the whole-PDU fast path agrees with the full rules")
struct L2CAPReassemblerWholePDUTests {
    /// An ACL packet's bytes: header (handle, PB flag, Data_Total_Length as given or counted) and data.
    static func packet(handle: UInt16 = 0x0040, boundary: UInt16 = 0b10, broadcast: UInt16 = 0,
                       declaredLength: Int? = nil, data: [UInt8]) -> [UInt8] {
        let first = handle | boundary << 12 | broadcast << 14
        let length = declaredLength ?? data.count
        return [UInt8(first & 0xFF), UInt8(first >> 8), UInt8(length & 0xFF), UInt8(length >> 8)] + data
    }

    /// A Basic L2CAP frame: length (as given or counted), CID, payload.
    static func frame(channel: UInt16 = 0x0004, declaredLength: Int? = nil, payload: [UInt8]) -> [UInt8] {
        let length = declaredLength ?? payload.count
        return [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(channel & 0xFF), UInt8(channel >> 8)] + payload
    }

    /// What the full rules give for `bytes` on a reassembler in the same state.
    static func fullRules(_ reassembler: L2CAPReassembler, _ bytes: [UInt8]) -> L2CAPPDU? {
        var copy = reassembler
        guard let packet = try? ACLPacket(decoding: bytes[...]) else { return nil }
        return copy.receive(packet).pdu
    }

    static let cases: [(String, [UInt8])] = [
        ("a notification, first flushable", packet(data: frame(payload: [0x1B, 0x03, 0x00, 1, 2, 3]))),
        ("first non-flushable (0b00)", packet(boundary: 0b00, data: frame(payload: [0x1B, 0x03, 0x00]))),
        ("complete PDU (0b11)", packet(boundary: 0b11, data: frame(payload: [0x0A, 0x03, 0x00]))),
        ("a broadcast flag set", packet(broadcast: 0b01, data: frame(payload: [0x1B, 0x03, 0x00]))),
        ("an empty information payload", packet(data: frame(channel: 0x0006, payload: []))),
        ("the highest handle bits", packet(handle: 0x0EFF, data: frame(channel: 0x0040, payload: [9, 9]))),
        ("a continuing fragment", packet(boundary: 0b01, data: frame(payload: [0x1B, 0x03, 0x00]))),
        ("the first of two fragments", packet(data: frame(declaredLength: 10, payload: [0x1B, 0x03, 0x00]))),
        ("an L2CAP length longer than the data", packet(data: frame(declaredLength: 4, payload: [0x1B, 0x03, 0x00]))),
        ("an L2CAP length shorter than the data", packet(data: frame(declaredLength: 2, payload: [0x1B, 0x03, 0x00]))),
        ("Data_Total_Length larger than the data", packet(declaredLength: 20, data: frame(payload: [0x1B, 0x03, 0x00]))),
        ("Data_Total_Length smaller than the data", packet(declaredLength: 6, data: frame(payload: [0x1B, 0x03, 0x00]))),
        ("only the ACL header and half an L2CAP header", packet(data: [0x03, 0x00])),
        ("a truncated ACL header", [0x40, 0x20, 0x07]),
        ("nothing", []),
    ]

    @Test("each packet: the fast path's PDU is the full rules' PDU, or it declines", arguments: cases)
    func agreesWithFullRules(_ name: String, _ bytes: [UInt8]) {
        let reassembler = L2CAPReassembler()
        let fast = reassembler.wholePDU(inPacket: bytes[...])
        let full = Self.fullRules(reassembler, bytes)
        if let fast {
            #expect(fast == full, "\(name)")
            #expect(fast.payload.startIndex == 8 && fast.payload.endIndex == bytes.count, "a slice of the packet: \(name)")
        }
    }

    @Test("the packets it must take: whole PDUs with a starting boundary flag and agreeing lengths")
    func takesWholePDUs() {
        let reassembler = L2CAPReassembler()
        for (name, bytes) in Self.cases.prefix(6) {
            #expect(reassembler.wholePDU(inPacket: bytes[...]) != nil, "\(name)")
        }
        for (name, bytes) in Self.cases.dropFirst(6) {
            #expect(reassembler.wholePDU(inPacket: bytes[...]) == nil, "\(name)")
        }
    }

    @Test("with a PDU partly received on any handle it declines, so the full rules report the dropped PDU")
    func declinesWhileReassembling() throws {
        var reassembler = L2CAPReassembler()
        let first = Self.packet(handle: 0x0041, data: Self.frame(declaredLength: 10, payload: [0x1B, 0x03, 0x00]))
        #expect(reassembler.receive(try ACLPacket(decoding: first[...])).pdu == nil)
        #expect(reassembler.isReassembling(handle: 0x0041))
        let whole = Self.packet(data: Self.frame(payload: [0x1B, 0x03, 0x00, 7]))
        #expect(reassembler.wholePDU(inPacket: whole[...]) == nil, "another handle's partial PDU: declined")
        let restart = Self.packet(handle: 0x0041, data: Self.frame(payload: [0x1B, 0x03, 0x00, 7]))
        #expect(reassembler.wholePDU(inPacket: restart[...]) == nil)
        let result = reassembler.receive(try ACLPacket(decoding: restart[...]))
        #expect(result.pdu?.payload.elementsEqual([0x1B, 0x03, 0x00, 7]) == true)
        #expect(result.error?.handle == 0x0041, "the interrupted PDU is reported: \(String(describing: result.error))")
    }

    @Test("a PDU over maximumPDUSize is declined, and the full rules discard it")
    func declinesOversized() throws {
        let reassembler = L2CAPReassembler(maximumPDUSize: 8)
        let bytes = Self.packet(data: Self.frame(payload: [0x1B, 0x03, 0x00, 1, 2]))
        #expect(reassembler.wholePDU(inPacket: bytes[...]) == nil)
        var copy = reassembler
        #expect(copy.receive(try ACLPacket(decoding: bytes[...])).error != nil)
        let fits = Self.packet(data: Self.frame(payload: [0x1B, 0x03, 0x00, 1]))
        #expect(reassembler.wholePDU(inPacket: fits[...]) != nil, "exactly maximumPDUSize octets")
    }

    @Test("a slice that does not start at index 0 (a packet inside a larger buffer)")
    func offsetSlice() {
        let bytes = [0xEE, 0xEE, 0xEE] + Self.packet(data: Self.frame(payload: [0x1B, 0x05, 0x00, 42]))
        let slice = bytes[3...]
        let pdu = L2CAPReassembler().wholePDU(inPacket: slice)
        #expect(pdu?.handle == 0x0040 && pdu?.channelID == .att)
        #expect(pdu.map { Array($0.payload) } == [0x1B, 0x05, 0x00, 42])
    }
}
