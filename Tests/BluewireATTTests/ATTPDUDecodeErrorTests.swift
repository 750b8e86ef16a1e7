import BluewireCore
import Testing

@testable import BluewireATT

@Suite struct ATTPDUDecodeErrorTests {
    func decodeError(_ bytes: [UInt8]) -> DecodeError? {
        do {
            _ = try ATTPDU(decoding: bytes)
            return nil
        } catch {
            return error
        }
    }

    @Test func emptyPDUHasNoOpcode() {
        #expect(decodeError([]) == DecodeError(.truncated(needed: 1, available: 0), layer: "att", field: "Attribute Opcode", offset: 0))
    }

    @Test func readByTypeResponseWhoseLengthDoesNotDivideTheDataIsRejected() {
        let error = decodeError([0x09, 0x07, 0x02, 0x00, 0x02, 0x03, 0x00, 0x00, 0x2A, 0x04, 0x00])
        #expect(error == DecodeError(.lengthMismatch(declared: 7, actual: 9), layer: "att", field: "Attribute Data List", offset: 2))
    }

    @Test func readByTypeResponseWithLengthBelowTheHandleSizeIsRejected() {
        #expect(decodeError([0x09, 0x01, 0x02])?.field.asString == "Length")
        #expect(decodeError([0x09, 0x00])?.reason == .invalidValue(0), "a zero length must not divide by zero")
    }

    @Test func readByGroupTypeResponseWithEmptyListIsRejected() {
        #expect(decodeError([0x11, 0x06])?.field.asString == "Attribute Data List")
    }

    @Test func findInformationResponseWithUnknownFormatIsRejected() {
        #expect(decodeError([0x05, 0x03, 0x01, 0x00, 0x00, 0x28]) ==
                DecodeError(.invalidValue(3), layer: "att", field: "Format", offset: 1))
        #expect(decodeError([0x05, 0x02, 0x01, 0x00, 0x00, 0x28])?.reason == .lengthMismatch(declared: 18, actual: 4))
    }

    @Test func findByTypeValueResponseWithPartialPairIsRejected() {
        #expect(decodeError([0x07, 0x01, 0x00, 0x05])?.field.asString == "Handles Information List")
    }

    @Test func truncatedFixedFieldsNameTheFieldAndOffset() {
        #expect(decodeError([0x01, 0x10, 0x01, 0x00]) ==
                DecodeError(.truncated(needed: 1, available: 0), layer: "att", field: "Error Code", offset: 4))
        #expect(decodeError([0x0C, 0x03, 0x00, 0x16]) ==
                DecodeError(.truncated(needed: 2, available: 1), layer: "att", field: "Value Offset", offset: 3))
        #expect(decodeError([0x1B, 0x2A])?.field.asString == "Attribute Handle")
    }

    @Test func trailingOctetsAfterFixedFieldsAreRejected() {
        #expect(decodeError([0x02, 0x17, 0x00, 0x00]) ==
                DecodeError(.trailingBytes(1), layer: "att", field: "Exchange MTU Request", offset: 3))
        #expect(decodeError([0x13, 0x00])?.reason == .trailingBytes(1))
        #expect(decodeError([0x1E, 0x00])?.reason == .trailingBytes(1))
    }

    @Test func thirtyTwoBitUUIDsAreNotAllowedInATT() {
        #expect(decodeError([0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28, 0x00, 0x00])?.field.asString == "Attribute Type")
        #expect(decodeError([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00])?.field.asString == "Attribute Group Type")
    }

    @Test func readMultipleNeedsTwoOrMoreWholeHandles() {
        #expect(decodeError([0x0E, 0x03, 0x00])?.reason == .truncated(needed: 4, available: 2))
        #expect(decodeError([0x20, 0x03, 0x00, 0x04])?.reason == .lengthMismatch(declared: 2, actual: 3))
    }

    @Test func signedWriteWithoutRoomForTheSignatureIsRejected() {
        #expect(decodeError([0xD2, 0x10, 0x00] + Array(repeating: 0, count: 11))?.field.asString == "Authentication Signature")
    }

    @Test func multipleHandleValueNotificationWithCutTupleIsRejected() {
        #expect(decodeError([0x23, 0x03, 0x00, 0x02, 0x00, 0x64]) ==
                DecodeError(.truncated(needed: 2, available: 1), layer: "att", field: "Attribute Value", offset: 5))
    }
}
