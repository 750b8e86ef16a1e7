import BluewireCore
import Testing

@testable import BluewireL2CAP

@Suite struct LESignalingCommandTests {
    static let vectors: [(name: String, bytes: [UInt8], command: LESignalingCommand)] = [
        ("Command Reject", [0x01, 0x02, 0x02, 0x00, 0x00, 0x00],
         .init(identifier: 2, body: .commandReject(reason: .commandNotUnderstood, data: []))),
        ("Disconnection Request", [0x06, 0x03, 0x04, 0x00, 0x40, 0x00, 0x41, 0x00],
         .init(identifier: 3, body: .disconnectionRequest(destinationCID: 0x40, sourceCID: 0x41))),
        ("Disconnection Response", [0x07, 0x03, 0x04, 0x00, 0x40, 0x00, 0x41, 0x00],
         .init(identifier: 3, body: .disconnectionResponse(destinationCID: 0x40, sourceCID: 0x41))),
        ("Connection Parameter Update Request", [0x12, 0x01, 0x08, 0x00, 0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0x2C, 0x01],
         .init(identifier: 1, body: .connectionParameterUpdateRequest(
            ConnectionParameterUpdate(intervalMin: 24, intervalMax: 40, latency: 0, timeoutMultiplier: 300)))),
        ("Connection Parameter Update Response", [0x13, 0x01, 0x02, 0x00, 0x01, 0x00],
         .init(identifier: 1, body: .connectionParameterUpdateResponse(result: .rejected))),
        ("LE Credit Based Connection Request", [0x14, 0x05, 0x0A, 0x00, 0x80, 0x00, 0x40, 0x00, 0x00, 0x02, 0xF7, 0x00, 0x0A, 0x00],
         .init(identifier: 5, body: .leCreditBasedConnectionRequest(spsm: 0x80, sourceCID: 0x40, mtu: 512, mps: 247, initialCredits: 10))),
        ("LE Credit Based Connection Response", [0x15, 0x05, 0x0A, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00],
         .init(identifier: 5, body: .leCreditBasedConnectionResponse(destinationCID: 0, mtu: 0, mps: 0, initialCredits: 0, result: .spsmNotSupported))),
        ("Flow Control Credit Indication", [0x16, 0x06, 0x04, 0x00, 0x40, 0x00, 0x05, 0x00],
         .init(identifier: 6, body: .flowControlCreditIndication(cid: 0x40, credits: 5))),
        ("Credit Based Connection Request", [0x17, 0x07, 0x0C, 0x00, 0x27, 0x00, 0x40, 0x00, 0x40, 0x00, 0x01, 0x00, 0x40, 0x00, 0x41, 0x00],
         .init(identifier: 7, body: .creditBasedConnectionRequest(spsm: 0x27, mtu: 64, mps: 64, initialCredits: 1, sourceCIDs: L2CAPCIDList([0x40, 0x41])))),
        ("Credit Based Connection Response", [0x18, 0x07, 0x0A, 0x00, 0x40, 0x00, 0x40, 0x00, 0x01, 0x00, 0x00, 0x00, 0x50, 0x00],
         .init(identifier: 7, body: .creditBasedConnectionResponse(mtu: 64, mps: 64, initialCredits: 1, result: .allConnectionsSuccessful, destinationCIDs: L2CAPCIDList([0x50])))),
        ("Credit Based Reconfigure Request", [0x19, 0x08, 0x06, 0x00, 0x80, 0x00, 0x80, 0x00, 0x50, 0x00],
         .init(identifier: 8, body: .creditBasedReconfigureRequest(mtu: 128, mps: 128, destinationCIDs: L2CAPCIDList([0x50])))),
        ("Credit Based Reconfigure Response", [0x1A, 0x08, 0x02, 0x00, 0x00, 0x00],
         .init(identifier: 8, body: .creditBasedReconfigureResponse(result: .reconfigurationSuccessful))),
        ("Echo Request (BR/EDR only)", [0x08, 0x09, 0x01, 0x00, 0xEE],
         .init(identifier: 9, body: .other(code: .echoRequest, data: [0xEE]))),
    ]

    @Test(arguments: 0..<vectors.count)
    func commandDecodesAndEncodesBack(index: Int) throws {
        let vector = Self.vectors[index]
        let decoded = try LESignalingCommand(decoding: vector.bytes)
        #expect(decoded == vector.command, "\(vector.name)")
        #expect(decoded.encode() == vector.bytes, "\(vector.name) re-encoded")
        #expect(decoded.code.name != nil, "\(vector.name) has a name")
    }

    @Test func lengthDisagreeingWithTheDataIsRejected() {
        #expect(throws: DecodeError(.lengthMismatch(declared: 4, actual: 2), layer: "l2cap", field: "Length", offset: 2)) {
            _ = try LESignalingCommand(decoding: [0x06, 0x01, 0x04, 0x00, 0x40, 0x00])
        }
        #expect(throws: DecodeError(.trailingBytes(1), layer: "l2cap", field: "Data", offset: 6)) {
            _ = try LESignalingCommand(decoding: [0x13, 0x01, 0x03, 0x00, 0x00, 0x00, 0x00])
        }
    }
}

@Suite struct LESignalingResponderTests {
    func reply(_ responder: inout LESignalingResponder, _ bytes: [UInt8]) -> (reply: [UInt8]?, event: LESignalingEvent?) {
        let output = responder.receive(bytes[...])
        return (output.reply?.encode(), output.event)
    }

    @Test func centralAcceptsValidParametersAndAsksTheHostToUpdateTheConnection() {
        var responder = LESignalingResponder(role: .central)
        let (sent, event) = reply(&responder, [0x12, 0x01, 0x08, 0x00, 0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0x2C, 0x01])
        #expect(sent == [0x13, 0x01, 0x02, 0x00, 0x00, 0x00])
        #expect(event == .updateConnectionParameters(
            ConnectionParameterUpdate(intervalMin: 24, intervalMax: 40, latency: 0, timeoutMultiplier: 300)))
    }

    @Test func centralRejectsParametersOutOfRange() {
        var responder = LESignalingResponder(role: .central)
        // interval min 5 (< 7.5 ms)
        #expect(reply(&responder, [0x12, 0x02, 0x08, 0x00, 0x05, 0x00, 0x28, 0x00, 0x00, 0x00, 0x2C, 0x01]).reply
                == [0x13, 0x02, 0x02, 0x00, 0x01, 0x00])
        // min > max
        #expect(reply(&responder, [0x12, 0x03, 0x08, 0x00, 0x30, 0x00, 0x28, 0x00, 0x00, 0x00, 0x2C, 0x01]).reply
                == [0x13, 0x03, 0x02, 0x00, 0x01, 0x00])
        // timeout 100 ms shorter than (1 + 4) × 50 ms × 2
        let (sent, event) = reply(&responder, [0x12, 0x04, 0x08, 0x00, 0x28, 0x00, 0x28, 0x00, 0x04, 0x00, 0x0A, 0x00])
        #expect(sent == [0x13, 0x04, 0x02, 0x00, 0x01, 0x00])
        #expect(event == .connectionParameterUpdateRejected(
            ConnectionParameterUpdate(intervalMin: 40, intervalMax: 40, latency: 4, timeoutMultiplier: 10)))
    }

    @Test func peripheralRejectsAConnectionParameterUpdateRequestAsNotUnderstood() {
        var responder = LESignalingResponder(role: .peripheral)
        let (sent, event) = reply(&responder, [0x12, 0x01, 0x08, 0x00, 0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0x2C, 0x01])
        #expect(sent == [0x01, 0x01, 0x02, 0x00, 0x00, 0x00])
        #expect(event == nil)
    }

    @Test func unsupportedCommandsGetCommandRejectNotUnderstood() {
        var responder = LESignalingResponder(role: .central)
        #expect(reply(&responder, [0x08, 0x09, 0x01, 0x00, 0xEE]).reply == [0x01, 0x09, 0x02, 0x00, 0x00, 0x00])
        #expect(reply(&responder, [0x7F, 0x0A, 0x00, 0x00]).reply == [0x01, 0x0A, 0x02, 0x00, 0x00, 0x00])
    }

    @Test func responsesAreNeverRejected() {
        var responder = LESignalingResponder(role: .central)
        let unmatched = reply(&responder, [0x13, 0x01, 0x02, 0x00, 0x00, 0x00])
        #expect(unmatched.reply == nil && unmatched.event == .ignored(.connectionParameterUpdateResponse))
        let reject = reply(&responder, [0x01, 0x05, 0x02, 0x00, 0x00, 0x00])
        #expect(reject.reply == nil && reject.event == .commandRejected(identifier: 5, reason: .commandNotUnderstood))
        let malformedResponse = reply(&responder, [0x0B, 0x05, 0x09, 0x00])
        #expect(malformedResponse.reply == nil)
    }

    @Test func creditBasedConnectionsAreRefusedAsSPSMNotSupported() {
        var responder = LESignalingResponder(role: .peripheral)
        #expect(reply(&responder, [0x14, 0x05, 0x0A, 0x00, 0x80, 0x00, 0x40, 0x00, 0x00, 0x02, 0xF7, 0x00, 0x0A, 0x00]).reply
                == [0x15, 0x05, 0x0A, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00])
        #expect(reply(&responder, [0x17, 0x07, 0x0C, 0x00, 0x27, 0x00, 0x40, 0x00, 0x40, 0x00, 0x01, 0x00, 0x40, 0x00, 0x41, 0x00]).reply
                == [0x18, 0x07, 0x0C, 0x00, 0, 0, 0, 0, 0, 0, 0x02, 0x00, 0, 0, 0, 0])
    }

    @Test func disconnectionRequestNamesTheInvalidCIDs() {
        var responder = LESignalingResponder(role: .central)
        #expect(reply(&responder, [0x06, 0x03, 0x04, 0x00, 0x40, 0x00, 0x41, 0x00]).reply
                == [0x01, 0x03, 0x06, 0x00, 0x02, 0x00, 0x40, 0x00, 0x41, 0x00])
    }

    @Test func malformedRequestIsRejectedWithItsIdentifier() {
        var responder = LESignalingResponder(role: .central)
        let (sent, event) = reply(&responder, [0x12, 0x0C, 0x08, 0x00, 0x18, 0x00])
        #expect(sent == [0x01, 0x0C, 0x02, 0x00, 0x00, 0x00])
        #expect(event == .malformedCommand(DecodeError(.lengthMismatch(declared: 8, actual: 2), layer: "l2cap", field: "Length", offset: 2)))
        #expect(reply(&responder, [0x12]).reply == nil, "no identifier, nothing to answer")
    }

    @Test func peripheralRequestIsMatchedToTheCentralsResponse() throws {
        var responder = LESignalingResponder(role: .peripheral)
        let built = responder.requestConnectionParameterUpdate(
            ConnectionParameterUpdate(intervalMin: 6, intervalMax: 12, latency: 0, timeoutMultiplier: 100))
        let request = try #require(built)
        #expect(request.encode() == [0x12, 0x01, 0x08, 0x00, 0x06, 0x00, 0x0C, 0x00, 0x00, 0x00, 0x64, 0x00])
        #expect(reply(&responder, [0x13, 0x01, 0x02, 0x00, 0x00, 0x00]).event == .connectionParameterUpdateResponse(.accepted))
        #expect(reply(&responder, [0x13, 0x01, 0x02, 0x00, 0x00, 0x00]).event == .ignored(.connectionParameterUpdateResponse),
                "a second response matches nothing")
        var central = LESignalingResponder(role: .central)
        let refused = central.requestConnectionParameterUpdate(
            ConnectionParameterUpdate(intervalMin: 6, intervalMax: 12, latency: 0, timeoutMultiplier: 100))
        #expect(refused == nil, "only a peripheral may send the request")
    }
}
