import BluewireCore
import BluewireHCI
import Testing

/// The LE encryption commands byte for byte (Core Vol 4 Part E §7.8.24–26): multi-octet fields least
/// significant first, the key as the host holds it (least significant octet first).
@Suite struct LESecurityCommandTests {
    static let key = bytes("000102030405060708090a0b0c0d0e0f")

    @Test func enableEncryptionCarriesRandEDIVAndKey() throws {
        let command = HCICommand.leEnableEncryption(LEEnableEncryption(
            connectionHandle: 0x0040, randomNumber: 0x0102_0304_0506_0708, encryptedDiversifier: 0x1234,
            longTermKey: Self.key))
        let expected = bytes("1920 1c 4000 0807060504030201 3412 000102030405060708090a0b0c0d0e0f")
        #expect(command.encoded == expected)
        #expect(try HCICommand(decoding: expected[...]) == command)
    }

    @Test func longTermKeyRequestRepliesAndTheirOpcodes() throws {
        let reply = HCICommand.leLongTermKeyRequestReply(LELongTermKeyRequestReply(connectionHandle: 0x0040, longTermKey: Self.key))
        #expect(reply.encoded == bytes("1a20 12 4000 000102030405060708090a0b0c0d0e0f"))
        let negative = HCICommand.leLongTermKeyRequestNegativeReply(ConnectionHandleParameter(connectionHandle: 0x0040))
        #expect(negative.encoded == bytes("1b20 02 4000"))
        #expect(try HCICommand(decoding: bytes("1b20 02 4000")[...]) == negative)
    }

    @Test func aKeyOfTheWrongLengthStillMakesAWellFramedPacket() {
        let short = HCICommand.leLongTermKeyRequestReply(LELongTermKeyRequestReply(connectionHandle: 1, longTermKey: [0xAA]))
        #expect(short.encoded.count == 3 + 18)
        #expect(short.encoded[5] == 0xAA && short.encoded[6...].allSatisfy { $0 == 0 })
    }

    @Test func truncatedEnableEncryptionIsAnError() {
        #expect(throws: DecodeError.self) { try HCICommand(decoding: bytes("1920 0c 4000 0807060504030201 3412")[...]) }
    }

    @Test func encryptionEventsDecode() throws {
        guard case .encryptionChange(let change) = try HCIEvent(decoding: bytes("08 04 00 4000 01")[...]) else {
            Issue.record("encryption change"); return
        }
        #expect(change == EncryptionChange(status: .success, connectionHandle: 0x40, encryptionEnabled: 1))
        guard case .encryptionKeyRefreshComplete(let refresh) = try HCIEvent(decoding: bytes("30 03 00 4000")[...]) else {
            Issue.record("key refresh"); return
        }
        #expect(refresh == EncryptionKeyRefreshComplete(status: .success, connectionHandle: 0x40))
        let request = LELongTermKeyRequest(connectionHandle: 0x40, randomNumber: 0x0102_0304_0506_0708, encryptedDiversifier: 0x1234)
        guard case .leMeta(.longTermKeyRequest(let decoded)) = try HCIEvent(decoding: bytes("3e 0d 05 4000 0807060504030201 3412")[...]) else {
            Issue.record("ltk request"); return
        }
        #expect(decoded == request)
    }
}
