import BluewireCore
import Testing

@testable import BluewireATT

/// Byte vectors for every PDU of Core Vol 3 Part F §3.4, decoded to the expected case and encoded back
/// to the same bytes.
@Suite struct ATTPDURoundTripTests {
    static let vectors: [(name: String, bytes: [UInt8], pdu: ATTPDU)] = [
        ("Error Response", [0x01, 0x10, 0x01, 0x00, 0x0A],
         .errorResponse(requestOpcode: .readByGroupTypeRequest, handle: 0x0001, error: .attributeNotFound)),
        ("Exchange MTU Request", [0x02, 0xF7, 0x00], .exchangeMTURequest(clientRxMTU: 247)),
        ("Exchange MTU Response", [0x03, 0x17, 0x00], .exchangeMTUResponse(serverRxMTU: 23)),
        ("Find Information Request", [0x04, 0x01, 0x00, 0xFF, 0xFF],
         .findInformationRequest(startingHandle: 1, endingHandle: 0xFFFF)),
        ("Find By Type Value Request", [0x06, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28, 0x0F, 0x18],
         .findByTypeValueRequest(startingHandle: 1, endingHandle: 0xFFFF, attributeType: 0x2800,
                                 attributeValue: [0x0F, 0x18])),
        ("Read By Type Request 16-bit", [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28],
         .readByTypeRequest(startingHandle: 1, endingHandle: 0xFFFF, attributeType: .characteristic)),
        ("Read By Type Request 128-bit",
         [0x08, 0x05, 0x00, 0x07, 0x00] + Array(0x10...0x1F),
         .readByTypeRequest(startingHandle: 5, endingHandle: 7,
                            attributeType: BluetoothUUID(littleEndian: Array(0x10...0x1F)[...])!)),
        ("Read Request", [0x0A, 0x03, 0x00], .readRequest(handle: 3)),
        ("Read Response", [0x0B, 0x42, 0x6C, 0x75, 0x65], .readResponse(value: [0x42, 0x6C, 0x75, 0x65])),
        ("Read Response empty", [0x0B], .readResponse(value: [])),
        ("Read Blob Request", [0x0C, 0x03, 0x00, 0x16, 0x00], .readBlobRequest(handle: 3, offset: 22)),
        ("Read Blob Response", [0x0D, 0xAA, 0xBB], .readBlobResponse(value: [0xAA, 0xBB])),
        ("Read Multiple Request", [0x0E, 0x03, 0x00, 0x05, 0x00], .readMultipleRequest(ATTHandleList([3, 5]))),
        ("Read Multiple Response", [0x0F, 0x01, 0x02, 0x03], .readMultipleResponse(values: [1, 2, 3])),
        ("Read By Group Type Request", [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28],
         .readByGroupTypeRequest(startingHandle: 1, endingHandle: 0xFFFF, attributeGroupType: .primaryService)),
        ("Read Multiple Variable Request", [0x20, 0x03, 0x00, 0x09, 0x00, 0x0B, 0x00],
         .readMultipleVariableRequest(ATTHandleList([3, 9, 11]))),
        ("Read Multiple Variable Response", [0x21, 0x02, 0x00, 0xAA, 0xBB, 0x00, 0x00],
         .readMultipleVariableResponse(ReadMultipleVariableResponse(lengthValueTupleList: [2, 0, 0xAA, 0xBB, 0, 0]))),
        ("Write Request", [0x12, 0x0E, 0x00, 0x01, 0x00], .writeRequest(handle: 0x0E, value: [0x01, 0x00])),
        ("Write Response", [0x13], .writeResponse),
        ("Write Command", [0x52, 0x10, 0x00, 0xFF], .writeCommand(handle: 0x10, value: [0xFF])),
        ("Signed Write Command", [0xD2, 0x10, 0x00, 0x7E] + Array(1...12),
         .signedWriteCommand(handle: 0x10, value: [0x7E], authenticationSignature: Array(1...12)[...])),
        ("Prepare Write Request", [0x16, 0x03, 0x00, 0x12, 0x00, 0x61, 0x62],
         .prepareWriteRequest(handle: 3, offset: 18, partValue: [0x61, 0x62])),
        ("Prepare Write Response", [0x17, 0x03, 0x00, 0x12, 0x00, 0x61, 0x62],
         .prepareWriteResponse(handle: 3, offset: 18, partValue: [0x61, 0x62])),
        ("Execute Write Request", [0x18, 0x01], .executeWriteRequest(flags: .writeAllPreparedValues)),
        ("Execute Write Request cancel", [0x18, 0x00], .executeWriteRequest(flags: .cancelAllPreparedWrites)),
        ("Execute Write Response", [0x19], .executeWriteResponse),
        ("Handle Value Notification", [0x1B, 0x2A, 0x00, 0x64], .handleValueNotification(handle: 0x2A, value: [0x64])),
        ("Handle Value Indication", [0x1D, 0x05, 0x00, 0x01, 0x00, 0xFF, 0xFF],
         .handleValueIndication(handle: 5, value: [0x01, 0x00, 0xFF, 0xFF])),
        ("Handle Value Confirmation", [0x1E], .handleValueConfirmation),
        ("Unknown request", [0x3F, 0x01, 0x02], .unknown(ATTOpcode(0x3F), parameters: [1, 2])),
        ("Unknown command", [0x7F], .unknown(ATTOpcode(0x7F), parameters: [])),
    ]

    @Test(arguments: 0..<vectors.count)
    func decodesToTheExpectedCaseAndEncodesBackToTheSameBytes(index: Int) throws {
        let vector = Self.vectors[index]
        let decoded = try ATTPDU(decoding: vector.bytes)
        #expect(decoded == vector.pdu, "\(vector.name): decoded \(decoded)")
        #expect(decoded.encode() == vector.bytes, "\(vector.name): re-encoded bytes differ")
        #expect(vector.pdu.encode() == vector.bytes, "\(vector.name): encoding the expected PDU differs")
        #expect(decoded.opcode.rawValue == vector.bytes[0], "\(vector.name): opcode")
    }

    @Test func listResponsesRoundTrip() throws {
        let vectors: [[UInt8]] = [
            [0x05, 0x01, 0x01, 0x00, 0x00, 0x28, 0x02, 0x00, 0x03, 0x28],
            [0x05, 0x02, 0x10, 0x00] + Array(0x20...0x2F),
            [0x07, 0x01, 0x00, 0x05, 0x00, 0x06, 0x00, 0x09, 0x00],
            [0x09, 0x07, 0x02, 0x00, 0x02, 0x03, 0x00, 0x00, 0x2A, 0x04, 0x00, 0x02, 0x05, 0x00, 0x01, 0x2A],
            [0x11, 0x06, 0x01, 0x00, 0x05, 0x00, 0x00, 0x18, 0x06, 0x00, 0x09, 0x00, 0x01, 0x18],
            [0x23, 0x03, 0x00, 0x01, 0x00, 0x64, 0x07, 0x00, 0x02, 0x00, 0x01, 0x02],
        ]
        for bytes in vectors {
            let pdu = try ATTPDU(decoding: bytes)
            #expect(pdu.encode() == bytes, "opcode 0x\(hex(bytes[0])) did not round-trip")
        }
    }

    @Test func decodedValuesShareTheInputStorage() throws {
        let bytes: [UInt8] = [0x00, 0x1B, 0x2A, 0x00, 0x01, 0x02, 0x03]
        let pdu = try ATTPDU(decoding: bytes[1...])
        guard case .handleValueNotification(let handle, let value) = pdu else {
            Issue.record("expected a notification, got \(pdu)")
            return
        }
        #expect(handle == 0x2A)
        // A slice keeps the indices of the array it came from: proof that nothing was copied.
        #expect(value.startIndex == 4 && value.endIndex == 7)
        bytes.withUnsafeBufferPointer { whole in
            value.withUnsafeBufferPointer { part in
                #expect(part.baseAddress == whole.baseAddress! + 4)
            }
        }
    }

    @Test func everyKnownOpcodeHasANameAndAKind() {
        #expect(ATTOpcode.allKnown.count == 31)
        for opcode in ATTOpcode.allKnown {
            #expect(opcode.name != nil, "0x\(hex(opcode.rawValue)) has no name")
            #expect(opcode.kind != nil, "\(opcode) has no kind")
        }
        #expect(ATTOpcode(0x3F).name == nil && ATTOpcode(0x3F).kind == nil)
    }

    @Test func requestsPairWithTheirResponses() {
        #expect(ATTOpcode.readByGroupTypeRequest.responseOpcode == .readByGroupTypeResponse)
        #expect(ATTOpcode.readMultipleVariableRequest.responseOpcode == .readMultipleVariableResponse)
        #expect(ATTOpcode.writeResponse.requestOpcode == .writeRequest)
        #expect(ATTOpcode.errorResponse.requestOpcode == nil)
        #expect(ATTOpcode.writeCommand.responseOpcode == nil)
        #expect(ATTOpcode.writeCommand.isCommand && ATTOpcode.signedWriteCommand.isCommand)
        #expect(ATTOpcode.signedWriteCommand.hasAuthenticationSignature)
        #expect(!ATTOpcode.writeRequest.isCommand)
    }

    @Test func errorCodesCarryTheirSpecificationNames() {
        #expect(ATTErrorCode.invalidHandle.rawValue == 0x01)
        #expect(ATTErrorCode.insufficientEncryption.rawValue == 0x0F)
        #expect(ATTErrorCode.valueNotAllowed.rawValue == 0x13)
        #expect(ATTErrorCode(0x0F).name == "Insufficient Encryption")
        #expect(ATTErrorCode(0x12).name == "Database Out Of Sync")
        #expect(ATTErrorCode(0x85).isApplicationError && ATTErrorCode(0x85).name == "Application Error")
        #expect(ATTErrorCode.cccdImproperlyConfigured.rawValue == 0xFD && ATTErrorCode(0xFD).isCommonProfileError)
        #expect(ATTErrorCode(0xFE).name == "Procedure Already In Progress")
        #expect(ATTErrorCode(0xFF).name == "Out Of Range")
        #expect(ATTErrorCode(0x50).name == "Reserved")
        #expect(ATTErrorCode.applicationError(0x01).rawValue == 0x81)
    }
}
