import BluewireSMP
import Testing

/// SMP PDU encoding and decoding (Core Vol 3 Part H §3.5–3.6).
@Suite struct SMPPDUTests {
    static let features = PairingFeatures(
        ioCapability: .keyboardDisplay, oobDataPresent: false,
        authRequirements: AuthRequirements(bonding: true, mitm: true, secureConnections: true),
        maximumEncryptionKeySize: 16, initiatorKeyDistribution: [.encryptionKey, .identityKey],
        responderKeyDistribution: [.encryptionKey, .identityKey, .signingKey]
    )

    static let everyPDU: [SMPPDU] = [
        .pairingRequest(features),
        .pairingResponse(features),
        .pairingConfirm(Array(0..<16)),
        .pairingRandom(Array(16..<32)),
        .pairingFailed(.confirmValueFailed),
        .encryptionInformation(longTermKey: Array(repeating: 0xAB, count: 16)),
        .centralIdentification(ediv: 0x1234, rand: Array(1...8)),
        .identityInformation(identityResolvingKey: Array(repeating: 0x11, count: 16)),
        .identityAddressInformation(SMPAddress(isRandom: true, octets: [1, 2, 3, 4, 5, 0xC6])),
        .signingInformation(signatureKey: Array(repeating: 0x22, count: 16)),
        .securityRequest(AuthRequirements(bonding: true, mitm: false, secureConnections: true)),
        .pairingPublicKey(x: Array(repeating: 1, count: 32), y: Array(repeating: 2, count: 32)),
        .pairingDHKeyCheck(Array(repeating: 3, count: 16)),
        .keypressNotification(.passkeyDigitEntered),
    ]

    @Test("every PDU round-trips through its encoding", arguments: everyPDU)
    func roundTrip(pdu: SMPPDU) throws {
        let bytes = pdu.encoded()
        #expect(bytes[0] == pdu.opcode.rawValue)
        #expect(try SMPPDU(decoding: bytes) == pdu)
    }

    /// The Pairing Request of the spec's c1 sample (Appendix D.3 / §2.2.3): 01 01 00 00 10 07 07 on the wire.
    @Test func pairingRequestWireBytes() throws {
        let pdu = try SMPPDU(decoding: [0x01, 0x01, 0x00, 0x00, 0x10, 0x07, 0x07])
        guard case .pairingRequest(let f) = pdu else { Issue.record("not a request"); return }
        #expect(f.ioCapability == .displayYesNo)
        #expect(!f.oobDataPresent)
        #expect(f.maximumEncryptionKeySize == 16)
        #expect(f.initiatorKeyDistribution == [.encryptionKey, .identityKey, .signingKey])
        #expect(f.responderKeyDistribution == [.encryptionKey, .identityKey, .signingKey])
        #expect(pdu.encoded() == [0x01, 0x01, 0x00, 0x00, 0x10, 0x07, 0x07])
    }

    @Test func authRequirementsBits() {
        let a = AuthRequirements(rawValue: 0x2D)
        #expect(a.bonding && a.mitm && a.secureConnections && !a.keypress && a.ct2)
        #expect(AuthRequirements(bonding: true, mitm: true, secureConnections: true, keypress: true, ct2: true).rawValue == 0x3D)
        #expect(!AuthRequirements(rawValue: 0x02).bonding)  // 0b10 is reserved, not bonding
    }

    @Test func everyFailedReasonByName() {
        let named: [(UInt8, PairingFailedReason)] = [
            (0x01, .passkeyEntryFailed), (0x02, .oobNotAvailable), (0x03, .authenticationRequirements),
            (0x04, .confirmValueFailed), (0x05, .pairingNotSupported), (0x06, .encryptionKeySize),
            (0x07, .commandNotSupported), (0x08, .unspecifiedReason), (0x09, .repeatedAttempts),
            (0x0A, .invalidParameters), (0x0B, .dhKeyCheckFailed), (0x0C, .numericComparisonFailed),
            (0x0D, .brEDRPairingInProgress), (0x0E, .crossTransportKeyDerivationNotAllowed),
            (0x0F, .keyRejected), (0x10, .busy),
        ]
        for (raw, reason) in named {
            #expect(PairingFailedReason(rawValue: raw) == reason)
            #expect(reason.rawValue == raw)
        }
        #expect(PairingFailedReason(rawValue: 0x77) == .reserved(0x77))
    }

    @Test func emptyAndUnknown() {
        #expect(throws: SMPDecodingError.empty) { try SMPPDU(decoding: []) }
        #expect(throws: SMPDecodingError.unknownOpcode(0x0F)) { try SMPPDU(decoding: [0x0F, 0]) }
        #expect(throws: SMPDecodingError.unknownOpcode(0x00)) { try SMPPDU(decoding: [0x00]) }
    }

    @Test("a PDU one octet short or long is refused", arguments: everyPDU)
    func wrongLength(pdu: SMPPDU) {
        let bytes = pdu.encoded()
        #expect(throws: SMPDecodingError.invalidLength(opcode: bytes[0], length: bytes.count - 1)) {
            try SMPPDU(decoding: Array(bytes.dropLast()))
        }
        #expect(throws: SMPDecodingError.invalidLength(opcode: bytes[0], length: bytes.count + 1)) {
            try SMPPDU(decoding: bytes + [0])
        }
    }

    @Test func reservedFieldValuesRefused() {
        #expect(throws: SMPDecodingError.invalidValue(opcode: 1, field: "IO Capability")) {
            try SMPPDU(decoding: [0x01, 0x05, 0, 0, 16, 0, 0])
        }
        #expect(throws: SMPDecodingError.invalidValue(opcode: 2, field: "Maximum Encryption Key Size")) {
            try SMPPDU(decoding: [0x02, 0x03, 0, 0, 6, 0, 0])
        }
        #expect(throws: SMPDecodingError.invalidValue(opcode: 1, field: "Maximum Encryption Key Size")) {
            try SMPPDU(decoding: [0x01, 0x03, 0, 0, 17, 0, 0])
        }
        #expect(throws: SMPDecodingError.invalidValue(opcode: 1, field: "OOB data flag")) {
            try SMPPDU(decoding: [0x01, 0x03, 2, 0, 16, 0, 0])
        }
        #expect(throws: SMPDecodingError.invalidValue(opcode: 9, field: "AddrType")) {
            try SMPPDU(decoding: [0x09, 2, 1, 2, 3, 4, 5, 6])
        }
        #expect(throws: SMPDecodingError.invalidValue(opcode: 0x0E, field: "Notification Type")) {
            try SMPPDU(decoding: [0x0E, 5])
        }
    }
}
