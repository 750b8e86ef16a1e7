import BluewireCore
import BluewireL2CAP
import Testing

@Suite struct L2CAPBasicFrameTests {
    @Test func decodesLengthAndChannelAndSlicesThePayload() throws {
        let bytes: [UInt8] = [0x03, 0x00, 0x04, 0x00, 0x0A, 0x03, 0x00]
        let frame = try L2CAPBasicFrame(decoding: bytes)
        #expect(frame.channelID == .att)
        #expect(Array(frame.payload) == [0x0A, 0x03, 0x00])
        #expect(frame.payload.startIndex == 4, "payload must be a slice of the input")
        #expect(frame.encode() == bytes)
    }

    @Test func fixedChannelIdentifiersMatchTheSpecification() {
        #expect(L2CAPChannelID.signaling.rawValue == 0x0001)
        #expect(L2CAPChannelID.att.rawValue == 0x0004)
        #expect(L2CAPChannelID.leSignaling.rawValue == 0x0005)
        #expect(L2CAPChannelID.smp.rawValue == 0x0006)
        #expect(L2CAPChannelID.att.description == "ATT (0x0004)")
        #expect(L2CAPChannelID(0x0040).isDynamic && L2CAPChannelID(0x0040).name == nil)
    }

    @Test func lengthFieldDisagreeingWithPayloadIsRejected() {
        #expect(throws: DecodeError(.lengthMismatch(declared: 5, actual: 1), layer: "l2cap", field: "PDU Length", offset: 0)) {
            _ = try L2CAPBasicFrame(decoding: [0x05, 0x00, 0x04, 0x00, 0x01])
        }
        #expect(throws: DecodeError(.truncated(needed: 2, available: 1), layer: "l2cap", field: "Channel ID", offset: 2)) {
            _ = try L2CAPBasicHeader(decoding: [0x05, 0x00, 0x04])
        }
    }
}
