import BluewireCore
import Testing

@testable import BluewireL2CAP

@Suite struct KFrameTests {
    @Test func segmentsCarryTheSDULengthFirstAndNeverExceedMPS() {
        var segmenter = KFrameSegmenter(mps: 23)
        let sdu = (0..<100).map { UInt8($0) }
        segmenter.start(sdu[...])
        var frames: [ArraySlice<UInt8>] = []
        while let frame = segmenter.nextKFrame() { frames.append(frame) }
        #expect(frames.count == KFrameSegmenter.kFrameCount(sduLength: 100, mps: 23))
        #expect(frames.count == 5)
        #expect(Array(frames[0].prefix(2)) == [100, 0])
        #expect(frames.allSatisfy { $0.count <= 23 })
        var reassembler = KFrameReassembler(mtu: 100, mps: 23)
        var result: KFrameReassembler.SDU?
        for frame in frames { result = try? reassembler.receive(frame) }
        #expect(result == KFrameReassembler.SDU(bytes: sdu, kFrames: 5))
        #expect(!reassembler.isReassembling)
    }

    @Test func emptySDUIsOneKFrameOfTwoOctets() throws {
        var segmenter = KFrameSegmenter(mps: 64)
        segmenter.start([])
        #expect(segmenter.nextKFrame().map(Array.init) == [0, 0])
        #expect(segmenter.nextKFrame() == nil)
        var reassembler = KFrameReassembler(mtu: 64, mps: 64)
        #expect(try reassembler.receive([0, 0]) == KFrameReassembler.SDU(bytes: [], kFrames: 1))
    }

    @Test func breachesAreThrownByName() {
        var r = KFrameReassembler(mtu: 50, mps: 30)
        #expect(throws: CreditBasedFlowViolation.kFrameLongerThanMPS(length: 31, mps: 30)) {
            _ = try r.receive(ArraySlice(repeating: 0, count: 31))
        }
        r = KFrameReassembler(mtu: 50, mps: 30)
        #expect(throws: CreditBasedFlowViolation.sduLengthExceedsMTU(sduLength: 51, mtu: 50)) {
            _ = try r.receive([51, 0, 1])
        }
        r = KFrameReassembler(mtu: 50, mps: 30)
        #expect(throws: CreditBasedFlowViolation.missingSDULength(length: 1)) { _ = try r.receive([1]) }
        r = KFrameReassembler(mtu: 50, mps: 30)
        #expect(throws: CreditBasedFlowViolation.sduLongerThanDeclared(sduLength: 3, received: 4)) {
            _ = try r.receive([3, 0, 1, 2, 3, 4])
        }
        r = KFrameReassembler(mtu: 50, mps: 30)
        #expect((try? r.receive([5, 0, 1, 2])) == .some(nil))
        #expect(throws: CreditBasedFlowViolation.sduLongerThanDeclared(sduLength: 5, received: 6)) {
            _ = try r.receive([3, 4, 5, 6])
        }
    }
}
