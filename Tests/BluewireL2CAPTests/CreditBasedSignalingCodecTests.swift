import BluewireCore
import Testing

@testable import BluewireL2CAP

@Suite struct CreditBasedSignalingCodecTests {
    @Test(arguments: 0..<LESignalingCommandTests.vectors.count)
    func everyShortenedCommandFailsWithATypedError(index: Int) {
        let bytes = LESignalingCommandTests.vectors[index].bytes
        // Dropping data octets while the Length still counts them, and with Length patched to match.
        for cut in 1...(bytes.count - 4) {
            var shorter = Array(bytes.dropLast(cut))
            #expect(throws: DecodeError.self) { _ = try LESignalingCommand(decoding: shorter) }
            shorter[2] = UInt8(shorter.count - 4)
            // Fixed-size commands must fail; lists and reject data may legitimately be shorter.
            let fixed: [LESignalingCode] = [
                .disconnectionRequest, .disconnectionResponse, .connectionParameterUpdateRequest,
                .connectionParameterUpdateResponse, .leCreditBasedConnectionRequest, .leCreditBasedConnectionResponse,
                .flowControlCreditIndication, .creditBasedReconfigureResponse,
            ]
            if fixed.contains(LESignalingCode(bytes[0])) {
                #expect(throws: DecodeError.self, "\(LESignalingCommandTests.vectors[index].name) cut \(cut)") {
                    _ = try LESignalingCommand(decoding: shorter)
                }
            }
        }
        for cut in 0..<min(4, bytes.count) {
            #expect(throws: DecodeError.self) { _ = try LESignalingCommand(decoding: Array(bytes.prefix(cut))) }
        }
    }

    @Test func anOddCIDListIsRejectedAtItsOffset() {
        #expect(throws: DecodeError(.lengthMismatch(declared: 2, actual: 3), layer: "l2cap", field: "Source CID", offset: 12)) {
            _ = try LESignalingCommand(decoding: [0x17, 0x07, 0x0B, 0x00, 0x27, 0x00, 0x40, 0x00, 0x40, 0x00, 0x01, 0x00, 0x40, 0x00, 0x41])
        }
    }

    @Test func everyResultCodeHasItsSpecificationName() {
        let le: [(LECreditBasedConnectionResult, UInt16)] = [
            (.connectionSuccessful, 0), (.spsmNotSupported, 2), (.noResourcesAvailable, 4), (.insufficientAuthentication, 5),
            (.insufficientAuthorization, 6), (.encryptionKeySizeTooShort, 7), (.insufficientEncryption, 8),
            (.invalidSourceCID, 9), (.sourceCIDAlreadyAllocated, 10), (.unacceptableParameters, 11),
        ]
        for (result, raw) in le {
            #expect(result.rawValue == raw)
            #expect(result.name != nil)
        }
        #expect(LECreditBasedConnectionResult(rawValue: 1).name == nil)
        #expect(LECreditBasedConnectionResult(rawValue: 1).description == "Reserved (0x0001)")
        #expect(LECreditBasedConnectionResult.insufficientEncryption.description == "Connection refused – insufficient encryption")
        for raw in UInt16(0)...0x000F where raw != 1 && raw != 3 {
            #expect(CreditBasedConnectionResult(rawValue: raw).name != nil, "enhanced result \(raw)")
        }
        #expect(CreditBasedConnectionResult.someRefusedInvalidSourceCID.refusesAll == false)
        #expect(CreditBasedConnectionResult.allRefusedSPSMNotSupported.refusesAll)
        #expect(CreditBasedConnectionResult.allPendingAuthorization.isPending)
        for raw in UInt16(0)...4 { #expect(CreditBasedReconfigureResult(rawValue: raw).name != nil) }
        #expect(CreditBasedReconfigureResult(rawValue: 5).name == nil)
    }

    @Test func spsmRanges() {
        #expect(SPSM(0x0001).isSIGAssigned && !SPSM(0x0001).isDynamic)
        #expect(SPSM(0x0080).isDynamic && SPSM(0x00FF).isDynamic)
        #expect(!SPSM(0x0000).isValid && !SPSM(0x0100).isValid)
        #expect(SPSM.eatt.description == "EATT (0x0027)")
    }

    @Test func securityShortfallsFollowTheLinksState() {
        let encrypted = L2CAPSecurityRequirement.encrypted
        #expect(encrypted.shortfall(of: .open) == .insufficientAuthentication)
        #expect(encrypted.shortfall(of: L2CAPLinkSecurity(hasKey: true)) == .insufficientEncryption)
        #expect(encrypted.shortfall(of: L2CAPLinkSecurity(isEncrypted: true, keySize: 16, hasKey: true)) == nil)
        let strong = L2CAPSecurityRequirement.authenticated
        #expect(strong.shortfall(of: L2CAPLinkSecurity(isEncrypted: true, keySize: 16, hasKey: true)) == .insufficientAuthentication)
        #expect(strong.shortfall(of: L2CAPLinkSecurity(isEncrypted: true, isAuthenticated: true, keySize: 7, hasKey: true))
                == .encryptionKeySizeTooShort)
        #expect(L2CAPSecurityRequirement.none.shortfall(of: .open) == nil)
    }
}
