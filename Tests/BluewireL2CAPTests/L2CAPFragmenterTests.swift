import BluewireCore
import BluewireHCI
import Testing

@testable import BluewireL2CAP

@Suite struct L2CAPFragmenterTests {
    @Test func pduIsSplitToTheBufferSizeWithLEBoundaryFlags() {
        let fragmenter = L2CAPFragmenter(bufferSize: 27)
        let payload = (0..<60).map { UInt8($0) }
        let packets = fragmenter.fragment(handle: 0x0040, channelID: .att, payload: payload[...])
        #expect(packets.map(\.data.count) == [27, 27, 10], "64 octets of B-frame in 27-octet buffers")
        #expect(packets.map(\.packetBoundary) == [.firstNonFlushable, .continuingFragment, .continuingFragment])
        #expect(packets.allSatisfy { $0.handle == 0x0040 && Int($0.header.dataLength) == $0.data.count })
        #expect(Array(packets[0].data.prefix(4)) == [60, 0, 0x04, 0x00])
    }

    @Test func pduThatFitsGoesInOnePacket() {
        let packets = L2CAPFragmenter(bufferSize: 251).fragment(handle: 1, channelID: .leSignaling, payload: [1, 2, 3][...])
        #expect(packets.count == 1)
        #expect(packets[0].encode() == [0x01, 0x00, 0x07, 0x00, 0x03, 0x00, 0x05, 0x00, 1, 2, 3])
    }

    @Test func fragmentsReassembleToTheOriginalPDU() {
        let payload = (0..<300).map { UInt8(truncatingIfNeeded: $0 * 7) }
        var reassembler = L2CAPReassembler()
        var completed: [L2CAPPDU] = []
        for size in [1, 5, 27, 251] {
            for packet in L2CAPFragmenter(bufferSize: size).fragment(handle: 9, channelID: .att, payload: payload[...]) {
                let result = reassembler.receive(packet)
                #expect(result.error == nil, "buffer size \(size)")
                if let pdu = result.pdu { completed.append(pdu) }
            }
        }
        #expect(completed.count == 4)
        #expect(completed.allSatisfy { Array($0.payload) == payload && $0.channelID == .att })
    }
}
