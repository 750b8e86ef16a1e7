import BluewireCore
import BluewireHCI
import Testing

@testable import BluewireL2CAP

@Suite struct L2CAPReassemblerTests {
    func start(_ handle: UInt16, _ data: [UInt8], flushable: Bool = true) -> ACLPacket {
        ACLPacket(handle: handle, packetBoundary: flushable ? .firstFlushable : .firstNonFlushable, data: data[...])
    }

    func continuation(_ handle: UInt16, _ data: [UInt8]) -> ACLPacket {
        ACLPacket(handle: handle, packetBoundary: .continuingFragment, data: data[...])
    }

    @Test func singleFragmentPDUIsASliceOfThePacketWithoutCopy() throws {
        var reassembler = L2CAPReassembler()
        let packetBytes: [UInt8] = [0x40, 0x20, 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x0A, 0x03, 0x00]
        let packet = try ACLPacket(decoding: packetBytes)
        let result = reassembler.receive(packet)
        #expect(result.error == nil)
        let pdu = try #require(result.pdu)
        #expect(pdu.handle == 0x40 && pdu.channelID == .att && Array(pdu.payload) == [0x0A, 0x03, 0x00])
        packetBytes.withUnsafeBufferPointer { whole in
            pdu.payload.withUnsafeBufferPointer { part in
                #expect(part.baseAddress == whole.baseAddress! + 8, "payload must point into the received packet")
            }
        }
    }

    @Test func startFragmentShorterThanDeclaredWaitsForContinuations() throws {
        var reassembler = L2CAPReassembler()
        #expect(reassembler.receive(start(1, [0x05, 0x00, 0x04, 0x00, 0x1B, 0x2A])) == L2CAPReassemblyResult())
        #expect(reassembler.isReassembling(handle: 1))
        #expect(reassembler.receive(continuation(1, [0x00, 0x01])) == L2CAPReassemblyResult())
        let result = reassembler.receive(continuation(1, [0x02]))
        #expect(result.error == nil)
        #expect(result.pdu == L2CAPPDU(handle: 1, channelID: .att, payload: [0x1B, 0x2A, 0x00, 0x01, 0x02]))
        #expect(!reassembler.isReassembling(handle: 1))
    }

    @Test func continuationWithoutStartIsATypedError() {
        var reassembler = L2CAPReassembler()
        let result = reassembler.receive(continuation(3, [1, 2, 3]))
        #expect(result.pdu == nil)
        #expect(result.error == L2CAPReassemblyError(handle: 3, reason: .continuationWithoutStart(octets: 3)))
    }

    @Test func newStartBeforeCompletionDropsThePartialAndKeepsTheNewPDU() {
        var reassembler = L2CAPReassembler()
        _ = reassembler.receive(start(1, [0x0A, 0x00, 0x04, 0x00, 0x01, 0x02]))
        let result = reassembler.receive(start(1, [0x01, 0x00, 0x04, 0x00, 0x1E]))
        #expect(result.error == L2CAPReassemblyError(handle: 1, reason: .startBeforeCompletion(receivedOctets: 6, expectedOctets: 14)))
        #expect(result.pdu == L2CAPPDU(handle: 1, channelID: .att, payload: [0x1E]))
        #expect(!reassembler.isReassembling(handle: 1))
    }

    @Test func overflowBeyondDeclaredLengthDropsOnlyThePartialPDU() {
        var reassembler = L2CAPReassembler()
        let earlier = reassembler.receive(start(1, [0x02, 0x00, 0x04, 0x00, 0x0A, 0x0B])).pdu
        _ = reassembler.receive(start(1, [0x03, 0x00, 0x04, 0x00, 0x01]))
        let result = reassembler.receive(continuation(1, [0x02, 0x03, 0x04]))
        #expect(result.pdu == nil)
        #expect(result.error == L2CAPReassemblyError(handle: 1, reason: .overflow(declared: 7, received: 8)))
        #expect(!reassembler.isReassembling(handle: 1))
        #expect(earlier == L2CAPPDU(handle: 1, channelID: .att, payload: [0x0A, 0x0B]), "completed PDUs are unaffected")
        // The link recovers at the next start fragment.
        #expect(reassembler.receive(start(1, [0x01, 0x00, 0x05, 0x00, 0x09])).pdu?.channelID == .leSignaling)
    }

    @Test func startFragmentLongerThanDeclaredIsAnOverflow() {
        var reassembler = L2CAPReassembler()
        let result = reassembler.receive(start(1, [0x01, 0x00, 0x04, 0x00, 0x0A, 0x0B]))
        #expect(result.error == L2CAPReassemblyError(handle: 1, reason: .overflow(declared: 5, received: 6)))
        #expect(result.pdu == nil)
    }

    @Test func packetLargerThanTheAdvertisedBufferIsAccepted() {
        // Emulated controllers advertise 27-byte buffers and then deliver a 251-byte PDU in one packet.
        var reassembler = L2CAPReassembler()
        let payload = (0..<247).map { UInt8(truncatingIfNeeded: $0) }
        let result = reassembler.receive(start(2, [0xF7, 0x00, 0x04, 0x00] + payload))
        #expect(result.pdu?.payload.count == 247)
        #expect(result.pdu.map { Array($0.payload) } == payload)
    }

    @Test func fragmentsOfDifferentHandlesInterleaveIndependently() {
        var reassembler = L2CAPReassembler()
        _ = reassembler.receive(start(1, [0x03, 0x00, 0x04, 0x00, 0x11]))
        _ = reassembler.receive(start(2, [0x02, 0x00, 0x06, 0x00, 0x21]))
        let second = reassembler.receive(continuation(2, [0x22]))
        let first = reassembler.receive(continuation(1, [0x12, 0x13]))
        #expect(second.pdu == L2CAPPDU(handle: 2, channelID: .smp, payload: [0x21, 0x22]))
        #expect(first.pdu == L2CAPPDU(handle: 1, channelID: .att, payload: [0x11, 0x12, 0x13]))
    }

    @Test func basicHeaderSplitAcrossFragmentsIsReassembled() {
        var reassembler = L2CAPReassembler()
        #expect(reassembler.receive(start(1, [0x02, 0x00, 0x04])).error == nil)
        #expect(reassembler.receive(continuation(1, [0x00, 0xAA])).pdu == nil)
        #expect(reassembler.receive(continuation(1, [0xBB])).pdu == L2CAPPDU(handle: 1, channelID: .att, payload: [0xAA, 0xBB]))
    }

    @Test func pduLargerThanTheMemoryBoundIsDroppedWithItsContinuations() {
        var reassembler = L2CAPReassembler(maximumPDUSize: 64)
        let result = reassembler.receive(start(1, [0x64, 0x00, 0x04, 0x00] + Array(repeating: 0, count: 20)))
        #expect(result.error == L2CAPReassemblyError(handle: 1, reason: .pduTooLarge(declared: 104, maximum: 64)))
        // The remaining 80 octets arrive and are dropped quietly, not as "continuation without start".
        #expect(reassembler.receive(continuation(1, Array(repeating: 0, count: 40))) == L2CAPReassemblyResult())
        #expect(reassembler.receive(continuation(1, Array(repeating: 0, count: 40))) == L2CAPReassemblyResult())
        #expect(!reassembler.isReassembling(handle: 1))
        #expect(reassembler.receive(continuation(1, [0])).error?.reason == .continuationWithoutStart(octets: 1))
    }

    @Test func disconnectionForgetsThePartialPDU() {
        var reassembler = L2CAPReassembler()
        _ = reassembler.receive(start(1, [0x05, 0x00, 0x04, 0x00, 0x01]))
        reassembler.disconnected(handle: 1)
        #expect(!reassembler.isReassembling(handle: 1))
        #expect(reassembler.receive(continuation(1, [0x02])).error?.reason == .continuationWithoutStart(octets: 1))
    }
}
