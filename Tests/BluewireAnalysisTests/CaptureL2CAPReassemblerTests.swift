import BluewireAnalysis
import BluewireCore
import Testing

@Suite struct CaptureL2CAPReassemblerTests {
    /// An ACL packet: handle + PB flag, Data_Total_Length, data.
    static func acl(_ handle: UInt16, pb: UInt16, _ data: [UInt8]) -> ArraySlice<UInt8> {
        let first = handle | pb << 12
        return ([UInt8(first & 0xFF), UInt8(first >> 8), UInt8(data.count & 0xFF), UInt8(data.count >> 8)] + data)[...]
    }

    // A 9-byte ATT notification (opcode, handle, 6 value bytes) in a 13-byte L2CAP PDU on CID 4.
    static let pdu: [UInt8] = [0x09, 0x00, 0x04, 0x00, 0x1B, 0x0E, 0x00, 1, 2, 3, 4, 5, 6]

    @Test func unfragmentedPDUIsCompleteAtOnceAndNotCopied() {
        var r = CaptureL2CAPReassembler()
        let packet = Self.acl(0x40, pb: 2, Self.pdu)
        guard case .complete(let pdu) = r.push(packet, direction: .controllerToHost, recordIndex: 3) else {
            Issue.record("expected a complete PDU")
            return
        }
        #expect(pdu.channelID == 4)
        #expect(Array(pdu.payload) == Array(Self.pdu[4...]))
        #expect(!pdu.isReassembled && pdu.firstRecordIndex == 3)
        #expect(pdu.bytes.startIndex == packet.startIndex + 4, "the PDU is a slice of the ACL packet")
    }

    @Test func fragmentsAreJoinedPerHandleAndDirection() {
        var r = CaptureL2CAPReassembler()
        _ = r.push(Self.acl(0x40, pb: 2, Array(Self.pdu[0..<6])), direction: .controllerToHost, recordIndex: 0)
        // Traffic on another handle and in the other direction does not disturb it.
        _ = r.push(Self.acl(0x41, pb: 2, Array(Self.pdu[0..<5])), direction: .controllerToHost, recordIndex: 1)
        _ = r.push(Self.acl(0x40, pb: 1, [9, 9, 9]), direction: .hostToController, recordIndex: 2)
        let middle = r.push(Self.acl(0x40, pb: 1, Array(Self.pdu[6..<10])), direction: .controllerToHost, recordIndex: 3)
        guard case .continued(received: 10, needed: 13) = middle else {
            Issue.record("expected a continuation, got \(middle)")
            return
        }
        let last = r.push(Self.acl(0x40, pb: 1, Array(Self.pdu[10...])), direction: .controllerToHost, recordIndex: 4)
        guard case .complete(let pdu) = last else {
            Issue.record("expected completion, got \(last)")
            return
        }
        #expect(Array(pdu.bytes) == Self.pdu)
        #expect(pdu.isReassembled && pdu.firstRecordIndex == 0)
    }

    @Test func continuationWithoutStartOrTooLongIsDropped() {
        var r = CaptureL2CAPReassembler()
        guard case .dropped = r.push(Self.acl(0x40, pb: 1, [1, 2, 3]), direction: .controllerToHost, recordIndex: 0)
        else { Issue.record("orphan continuation should be dropped"); return }
        _ = r.push(Self.acl(0x40, pb: 2, Array(Self.pdu[0..<6])), direction: .controllerToHost, recordIndex: 1)
        guard case .dropped = r.push(Self.acl(0x40, pb: 1, [UInt8](repeating: 0, count: 20)),
                                     direction: .controllerToHost, recordIndex: 2)
        else { Issue.record("a continuation longer than the PDU should be dropped"); return }
        // The open PDU is still waiting and completes with the right bytes.
        guard case .complete = r.push(Self.acl(0x40, pb: 1, Array(Self.pdu[6...])), direction: .controllerToHost,
                                      recordIndex: 3)
        else { Issue.record("the PDU should still complete"); return }
    }

    @Test func startCarryingMoreThanItsL2CAPLengthStartsNothing() {
        var r = CaptureL2CAPReassembler()
        var data = Self.pdu
        data[0] = 0x02  // L2CAP length 2, but 9 payload bytes follow
        guard case .dropped = r.push(Self.acl(0x40, pb: 2, data), direction: .controllerToHost, recordIndex: 0)
        else { Issue.record("expected dropped"); return }
    }

    @Test func tinyPacketsNeverTrap() {
        var r = CaptureL2CAPReassembler()
        for length in 0..<8 {
            for pb: UInt8 in [0, 1, 2, 3] {
                let bytes = [UInt8(0x40), pb << 4, UInt8(length), 0] + [UInt8](repeating: 0xFF, count: length)
                _ = r.push(bytes.prefix(max(0, length + 4 - 1))[...], direction: .hostToController, recordIndex: 0)
                _ = r.push(bytes[...], direction: .hostToController, recordIndex: 0)
            }
        }
    }
}
