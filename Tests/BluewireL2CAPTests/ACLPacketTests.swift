import BluewireCore
import BluewireHCI
import Testing

@Suite struct ACLPacketTests {
    @Test func decodesHandleFlagsAndLength() throws {
        let packet = try ACLPacket(decoding: [0x40, 0x20, 0x03, 0x00, 0xAA, 0xBB, 0xCC])
        #expect(packet.handle == 0x0040)
        #expect(packet.packetBoundary == .firstFlushable)
        #expect(packet.header.broadcast == .pointToPoint)
        #expect(packet.header.dataLength == 3)
        #expect(Array(packet.data) == [0xAA, 0xBB, 0xCC])
    }

    @Test func encodesEveryBoundaryFlagIntoBits12And13() throws {
        for flag in ACLPacketBoundaryFlag.allCases {
            let packet = ACLPacket(handle: 0x0EFF, packetBoundary: flag, data: [0x01])
            let bytes = packet.encode()
            #expect(bytes[1] == 0x0E | flag.rawValue << 4, "\(flag)")
            #expect(try ACLPacket(decoding: bytes) == packet, "\(flag) did not round-trip")
        }
    }

    @Test func broadcastFlagIsBits14And15() throws {
        let packet = try ACLPacket(decoding: [0x01, 0x50, 0x00, 0x00])
        #expect(packet.header.broadcast == .brEdrBroadcast && packet.packetBoundary == .continuingFragment)
        #expect(packet.encode() == [0x01, 0x50, 0x00, 0x00])
    }

    @Test func truncatedHeaderIsADecodeError() {
        #expect(throws: DecodeError(.truncated(needed: 2, available: 1), layer: "hci", field: "Data_Total_Length", offset: 2)) {
            _ = try ACLPacket(decoding: [0x40, 0x00, 0x05])
        }
    }

    @Test func dataShorterOrLongerThanDeclaredIsALengthMismatch() {
        #expect(throws: DecodeError(.lengthMismatch(declared: 5, actual: 2), layer: "hci", field: "Data_Total_Length", offset: 2)) {
            _ = try ACLPacket(decoding: [0x40, 0x00, 0x05, 0x00, 0x01, 0x02])
        }
        #expect(throws: DecodeError(.lengthMismatch(declared: 1, actual: 2), layer: "hci", field: "Data_Total_Length", offset: 2)) {
            _ = try ACLPacket(decoding: [0x40, 0x00, 0x01, 0x00, 0x01, 0x02])
        }
    }
}
