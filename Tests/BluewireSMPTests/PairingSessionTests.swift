import BluewireCore
import BluewireCrypto
import BluewireSMP
import Testing

/// An initiator and a responder state machine paired against each other for every method
/// (Core Vol 3 Part H §2.3.5, appendix C), and the ways a pairing must fail.
@Suite struct PairingSessionTests {
    typealias Side = PairingHarness.Side

    /// Both sides paired, used the same key for encryption, and exchanged the keys they negotiated.
    func expectPaired(_ h: PairingHarness, method: PairingMethod, sc: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(h.failures.isEmpty, sourceLocation: sourceLocation)
        guard let c = h.results[.central], let p = h.results[.peripheral] else {
            Issue.record("not paired: \(h.failures)", sourceLocation: sourceLocation)
            return
        }
        #expect(c.method == method && p.method == method, sourceLocation: sourceLocation)
        #expect(c.secureConnections == sc && p.secureConnections == sc, sourceLocation: sourceLocation)
        #expect(c.authenticated == method.isAuthenticated, sourceLocation: sourceLocation)
        #expect(h.encryptionKeys[.central] != nil && h.encryptionKeys[.central] == h.encryptionKeys[.peripheral], sourceLocation: sourceLocation)
        if sc {
            #expect(c.longTermKey != nil && c.longTermKey == p.longTermKey, sourceLocation: sourceLocation)
            #expect(c.longTermKey == h.encryptionKeys[.central], sourceLocation: sourceLocation)
            #expect(c.localKeys.longTermKey == nil && p.localKeys.longTermKey == nil, sourceLocation: sourceLocation)
        } else {
            // Legacy: each side's distributed LTK/EDIV/Rand arrives unchanged at the other.
            #expect(p.localKeys.longTermKey?.count == 16, sourceLocation: sourceLocation)
            #expect(c.peerKeys.longTermKey == p.localKeys.longTermKey, sourceLocation: sourceLocation)
            #expect(c.peerKeys.ediv == p.localKeys.ediv && c.peerKeys.rand == p.localKeys.rand, sourceLocation: sourceLocation)
            #expect(p.peerKeys.longTermKey == c.localKeys.longTermKey && c.localKeys.longTermKey != nil, sourceLocation: sourceLocation)
        }
        // IRK + identity address and CSRK, both directions.
        #expect(c.peerKeys.identityResolvingKey == h.peripheral.configuration.identityResolvingKey, sourceLocation: sourceLocation)
        #expect(c.peerKeys.identityAddress == h.peripheral.configuration.identityAddress, sourceLocation: sourceLocation)
        #expect(c.peerKeys.signatureKey == h.peripheral.configuration.signatureKey, sourceLocation: sourceLocation)
        #expect(p.peerKeys.identityResolvingKey == h.central.configuration.identityResolvingKey, sourceLocation: sourceLocation)
        #expect(p.peerKeys.identityAddress == h.central.configuration.identityAddress, sourceLocation: sourceLocation)
        #expect(p.peerKeys.signatureKey == h.central.configuration.signatureKey, sourceLocation: sourceLocation)
        #expect(h.central.deadline == nil && h.peripheral.deadline == nil, sourceLocation: sourceLocation)
    }

    @Test func secureConnectionsJustWorks() {
        var h = PairingHarness(central: .test(.noInputNoOutput, seed: 1), peripheral: .test(.noInputNoOutput, seed: 9))
        h.run()
        expectPaired(h, method: .justWorks, sc: true)
        #expect(h.sent.contains { $0.opcode == .pairingPublicKey && $0.from == .peripheral })
    }

    @Test func secureConnectionsNumericComparison() {
        var h = PairingHarness(
            central: .test(.displayYesNo, mitm: true, seed: 1), peripheral: .test(.displayYesNo, mitm: true, seed: 9))
        h.run()
        expectPaired(h, method: .numericComparison, sc: true)
        #expect(h.comparisons[.central] != nil && h.comparisons[.central] == h.comparisons[.peripheral])
        #expect((h.comparisons[.central] ?? 1_000_000) < 1_000_000)
    }

    @Test(
        "LE SC Passkey Entry, each display/entry variant",
        arguments: [
            (IOCapability.keyboardOnly, IOCapability.displayOnly, PasskeyRoles.responderDisplays),
            (.displayOnly, .keyboardOnly, .initiatorDisplays),
            (.keyboardOnly, .keyboardOnly, .bothInput),
        ])
    func secureConnectionsPasskey(initiator: IOCapability, responder: IOCapability, roles: PasskeyRoles) {
        var h = PairingHarness(central: .test(initiator, mitm: true, seed: 1), peripheral: .test(responder, mitm: true, seed: 9))
        h.run()
        expectPaired(h, method: .passkeyEntry(roles), sc: true)
        // 20 rounds of confirm and random from each side (§2.3.5.6.3).
        #expect(h.sent.filter { $0.opcode == .pairingConfirm }.count == 40)
        #expect(h.sent.filter { $0.opcode == .pairingRandom }.count == 40)
        #expect((roles == .bothInput) == (h.displayedPasskey == nil))
    }

    @Test func legacyJustWorks() {
        var h = PairingHarness(
            central: .test(.noInputNoOutput, sc: false, seed: 1), peripheral: .test(.noInputNoOutput, sc: true, seed: 9))
        h.run()
        expectPaired(h, method: .justWorks, sc: false)
        #expect(!h.sent.contains { $0.opcode == .pairingPublicKey })
    }

    @Test(
        "LE legacy Passkey Entry, each variant",
        arguments: [
            (IOCapability.keyboardOnly, IOCapability.displayOnly, PasskeyRoles.responderDisplays),
            (.displayOnly, .keyboardOnly, .initiatorDisplays),
            (.keyboardOnly, .keyboardOnly, .bothInput),
        ])
    func legacyPasskey(initiator: IOCapability, responder: IOCapability, roles: PasskeyRoles) {
        var h = PairingHarness(
            central: .test(initiator, sc: false, mitm: true, seed: 1), peripheral: .test(responder, sc: false, mitm: true, seed: 9))
        h.run()
        expectPaired(h, method: .passkeyEntry(roles), sc: false)
    }

    @Test func negotiatedKeySizeMasksTheKey() {
        var h = PairingHarness(
            central: .test(.noInputNoOutput, seed: 1), peripheral: .test(.noInputNoOutput, maximumKeySize: 10, seed: 9))
        h.run()
        expectPaired(h, method: .justWorks, sc: true)
        #expect(h.results[.central]?.keySize == 10)
        // Wire order: the six most significant octets are the last six, and they are zero (§2.3.4).
        #expect(h.encryptionKeys[.central]?.suffix(6).allSatisfy { $0 == 0 } == true)
    }

    @Test func keyDistributionOnlyAsNegotiated() {
        var central = PairingConfiguration.test(.noInputNoOutput, seed: 1)
        central.requestedPeerKeys = [.identityKey]
        var h = PairingHarness(central: central, peripheral: .test(.noInputNoOutput, seed: 9))
        h.run()
        #expect(h.results[.central]?.peerKeys.identityResolvingKey != nil)
        #expect(h.results[.central]?.peerKeys.signatureKey == nil)
        #expect(h.results[.peripheral]?.peerKeys.signatureKey != nil)
        #expect(!h.sent.contains { $0.from == .peripheral && $0.opcode == .signingInformation })
    }

    // MARK: failures

    func expectFailed(_ h: PairingHarness, local: Side, _ reason: PairingFailedReason, sourceLocation: SourceLocation = #_sourceLocation) {
        let remote: Side = local == .central ? .peripheral : .central
        #expect(h.failures[local] == .local(reason), sourceLocation: sourceLocation)
        #expect(h.failures[remote] == .remote(reason), sourceLocation: sourceLocation)
        #expect(h.results.isEmpty, sourceLocation: sourceLocation)
        #expect(h.encryptionKeys.isEmpty, sourceLocation: sourceLocation)
    }

    @Test func secureConnectionsWrongPasskey() {
        var h = PairingHarness(central: .test(.keyboardOnly, mitm: true, seed: 1), peripheral: .test(.displayOnly, mitm: true, seed: 9))
        h.wrongPasskey = .central
        h.run()
        // The responder checks Ca against its passkey first (§2.3.5.6.3).
        #expect(h.failures[.central] != nil && h.failures[.peripheral] != nil)
        #expect(h.failures.values.contains(.local(.confirmValueFailed)))
        #expect(h.failures.values.contains(.remote(.confirmValueFailed)))
        #expect(h.results.isEmpty && h.encryptionKeys.isEmpty)
    }

    @Test func legacyWrongPasskey() {
        var h = PairingHarness(
            central: .test(.displayOnly, sc: false, mitm: true, seed: 1), peripheral: .test(.keyboardOnly, sc: false, mitm: true, seed: 9))
        h.wrongPasskey = .peripheral
        h.run()
        expectFailed(h, local: .peripheral, .confirmValueFailed)
    }

    @Test func numericComparisonRejected() {
        var h = PairingHarness(
            central: .test(.displayYesNo, mitm: true, seed: 1), peripheral: .test(.keyboardDisplay, mitm: true, seed: 9))
        h.rejectComparison = .peripheral
        h.run()
        expectFailed(h, local: .peripheral, .numericComparisonFailed)
    }

    @Test func timeoutStopsSMPOnTheLink() {
        var h = PairingHarness(central: .test(.noInputNoOutput, seed: 1), peripheral: .test(.noInputNoOutput, seed: 9))
        h.drop = .pairingResponse
        h.run()
        let deadline = h.central.deadline
        #expect(deadline == MonotonicInstant.zero + .seconds(30))
        #expect(h.central.timerFired(now: MonotonicInstant.zero + .seconds(29)).isEmpty)
        #expect(h.central.timerFired(now: deadline ?? .zero) == [.failed(.timeout)])
        #expect(h.central.isFinished && h.central.deadline == nil)
        // After the timeout nothing more is sent or accepted on this link (§3.4).
        let late = SMPPDU.pairingResponse(h.peripheral.configuration.test_features).encoded()
        #expect(h.central.receive(late, now: MonotonicInstant.zero + .seconds(31)).isEmpty)
        #expect(h.central.start(now: .zero + .seconds(32)).isEmpty)
    }

    @Test func invalidPublicKeyRefused() {
        var responder = PairingHarness(central: .test(.noInputNoOutput, seed: 1), peripheral: .test(.noInputNoOutput, seed: 9)).peripheral
        let request = SMPPDU.pairingRequest(PairingConfiguration.test(.noInputNoOutput, seed: 1).test_features).encoded()
        let answer = responder.receive(request, now: .zero)
        #expect(answer.first.map { if case .send(.pairingResponse) = $0 { true } else { false } } == true)
        // Appendix D public key B with its Y changed: not a point on P-256 (CVE-2018-5383).
        var y = hex("4c55f33e 429dad37 7356703a 9ab85160 472d1130 e28e3676 5f89aff9 15b1214a")
        y[31] ^= 1
        let x = hex("1ea1f0f0 1faf1d96 09592284 f19e4c00 47b58afd 8615a69f 559077b2 2faaa190")
        let result = responder.receive(SMPPDU.pairingPublicKey(x: x.reversed(), y: y.reversed()).encoded(), now: .zero)
        #expect(result == [.send(.pairingFailed(.dhKeyCheckFailed)), .failed(.local(.dhKeyCheckFailed))])
        #expect(responder.longTermKeyRequested(ediv: 0, rand: [UInt8](repeating: 0, count: 8), now: .zero) == [.longTermKeyNegativeReply])
    }

    @Test func peerPairingFailed() {
        var h = PairingHarness(central: .test(.noInputNoOutput, seed: 1), peripheral: .test(.noInputNoOutput, seed: 9))
        let start = h.central.start(now: .zero)
        #expect(start.count == 1)
        let actions = h.central.receive(SMPPDU.pairingFailed(.pairingNotSupported).encoded(), now: .zero)
        #expect(actions == [.failed(.remote(.pairingNotSupported))])
        #expect(h.central.isFinished && h.central.deadline == nil)
    }

    @Test func secureConnectionsOnlyRefusesLegacy() {
        var h = PairingHarness(
            central: .test(.noInputNoOutput, scOnly: true, seed: 1), peripheral: .test(.noInputNoOutput, sc: false, seed: 9))
        h.run()
        expectFailed(h, local: .central, .authenticationRequirements)
    }

    @Test func keySizeBelowApplicationMinimum() {
        var h = PairingHarness(
            central: .test(.noInputNoOutput, seed: 1), peripheral: .test(.noInputNoOutput, maximumKeySize: 7, minimumKeySize: 7, seed: 9))
        h.central = PairingSession(
            role: .initiator, configuration: .test(.noInputNoOutput, minimumKeySize: 16, seed: 1), crypto: SwiftCryptoSMP(),
            initiatorAddress: PairingHarness.centralAddress, responderAddress: PairingHarness.peripheralAddress)
        h.run()
        expectFailed(h, local: .central, .encryptionKeySize)
    }

    @Test func mitmRequiredButOnlyJustWorksPossible() {
        var h = PairingHarness(
            central: .test(.keyboardDisplay, mitm: true, seed: 1), peripheral: .test(.noInputNoOutput, seed: 9))
        h.run()
        expectFailed(h, local: .central, .authenticationRequirements)
    }

    @Test func unknownCommandAndBadLength() {
        var h = PairingHarness(central: .test(.noInputNoOutput, seed: 1), peripheral: .test(.noInputNoOutput, seed: 9))
        #expect(h.peripheral.receive([0x1F], now: .zero) == [.send(.pairingFailed(.commandNotSupported)), .failed(.local(.commandNotSupported))])
        _ = h.central.start(now: .zero)
        #expect(h.central.receive([0x02, 0x03], now: .zero) == [.send(.pairingFailed(.invalidParameters)), .failed(.local(.invalidParameters))])
    }

    @Test func securityRequestReachesTheCentral() {
        var h = PairingHarness(central: .test(.noInputNoOutput, seed: 1), peripheral: .test(.noInputNoOutput, seed: 9))
        let request = h.peripheral.securityRequest()
        guard case .send(let pdu) = request.first else { Issue.record("nothing sent"); return }
        let actions = h.central.receive(pdu.encoded(), now: .zero)
        guard case .securityRequested(let auth) = actions.first else { Issue.record("not reported"); return }
        #expect(auth.bonding && auth.secureConnections)
    }
}

extension PairingConfiguration {
    /// The features a device with this configuration states as initiator (for hand-built PDUs).
    var test_features: PairingFeatures {
        PairingFeatures(
            ioCapability: ioCapability,
            authRequirements: AuthRequirements(bonding: bonding, mitm: mitmRequired, secureConnections: secureConnections),
            maximumEncryptionKeySize: maximumKeySize, initiatorKeyDistribution: [.encryptionKey, .identityKey, .signingKey],
            responderKeyDistribution: [.encryptionKey, .identityKey, .signingKey])
    }
}

/// Rules the responder applies to the initiator's Pairing Request, and the order of commitments.
@Suite struct PairingResponderRuleTests {
    func responder(_ configuration: PairingConfiguration) -> PairingSession<SwiftCryptoSMP> {
        PairingSession(
            role: .responder, configuration: configuration, crypto: SwiftCryptoSMP(),
            initiatorAddress: PairingHarness.centralAddress, responderAddress: PairingHarness.peripheralAddress)
    }

    @Test func secureConnectionsOnlyResponderRefusesLegacyRequest() {
        var session = responder(.test(.noInputNoOutput, scOnly: true, seed: 9))
        var legacy = PairingConfiguration.test(.noInputNoOutput, sc: false, seed: 1).test_features
        legacy.authRequirements = AuthRequirements(bonding: true, mitm: false, secureConnections: false)
        let actions = session.receive(SMPPDU.pairingRequest(legacy).encoded(), now: .zero)
        #expect(actions == [.send(.pairingFailed(.authenticationRequirements)), .failed(.local(.authenticationRequirements))])
    }

    @Test func responderNarrowsKeyDistributionToTheRequest() {
        var configuration = PairingConfiguration.test(.noInputNoOutput, seed: 9)
        configuration.signatureKey = nil  // nothing to sign with: CSRK is not offered
        var session = responder(configuration)
        var request = PairingConfiguration.test(.noInputNoOutput, seed: 1).test_features
        request.initiatorKeyDistribution = [.identityKey]
        request.responderKeyDistribution = [.encryptionKey, .identityKey, .signingKey]
        let actions = session.receive(SMPPDU.pairingRequest(request).encoded(), now: .zero)
        guard case .send(.pairingResponse(let response)) = actions.first else {
            Issue.record("no Pairing Response: \(actions)")
            return
        }
        #expect(response.initiatorKeyDistribution == [.identityKey])
        #expect(response.responderKeyDistribution == [.encryptionKey, .identityKey])
        #expect(session.deadline == MonotonicInstant.zero + .seconds(30))
    }

    @Test func initiatorRefusesAConfirmBeforeItsOwnInPasskeyEntry() {
        var session = PairingSession(
            role: .initiator, configuration: .test(.keyboardOnly, sc: false, mitm: true, seed: 1), crypto: SwiftCryptoSMP(),
            initiatorAddress: PairingHarness.centralAddress, responderAddress: PairingHarness.peripheralAddress)
        _ = session.start(now: .zero)
        var response = PairingConfiguration.test(.displayOnly, sc: false, mitm: true, seed: 9).test_features
        response.initiatorKeyDistribution = [.encryptionKey]
        response.responderKeyDistribution = [.encryptionKey]
        #expect(session.receive(SMPPDU.pairingResponse(response).encoded(), now: .zero) == [.requestPasskey])
        // Passkey not entered yet, so no Mconfirm was sent: a Sconfirm now is out of order.
        let early = session.receive(SMPPDU.pairingConfirm([UInt8](repeating: 1, count: 16)).encoded(), now: .zero)
        #expect(early == [.send(.pairingFailed(.unspecifiedReason)), .failed(.local(.unspecifiedReason))])
    }
}

/// LE Secure Connections Out of Band (Core Vol 3 Part H §2.3.5.6.4), both directions and one direction.
@Suite struct PairingOOBTests {
    @Test func bothSidesHaveTheOtherSidesOOBData() throws {
        var h = PairingHarness(central: .test(.noInputNoOutput, seed: 1), peripheral: .test(.noInputNoOutput, seed: 9))
        h.central.peerOOBData = try h.peripheral.localOOBData()
        h.peripheral.peerOOBData = try h.central.localOOBData()
        h.run()
        #expect(h.failures.isEmpty)
        #expect(h.results[.central]?.method == .outOfBand && h.results[.peripheral]?.method == .outOfBand)
        #expect(h.results[.central]?.authenticated == true)
        #expect(h.results[.central]?.longTermKey != nil && h.results[.central]?.longTermKey == h.results[.peripheral]?.longTermKey)
        #expect(!h.sent.contains { $0.opcode == .pairingConfirm })
    }

    @Test("only one side received OOB data", arguments: [true, false])
    func oneDirection(centralHasPeripheralsData: Bool) throws {
        var h = PairingHarness(central: .test(.noInputNoOutput, seed: 1), peripheral: .test(.noInputNoOutput, seed: 9))
        if centralHasPeripheralsData {
            h.central.peerOOBData = try h.peripheral.localOOBData()
        } else {
            h.peripheral.peerOOBData = try h.central.localOOBData()
        }
        h.run()
        #expect(h.failures.isEmpty)
        #expect(h.results[.central]?.method == .outOfBand)
        #expect(h.results[.central]?.longTermKey == h.results[.peripheral]?.longTermKey && h.results[.central] != nil)
    }

    @Test func wrongOOBCommitmentFails() throws {
        var h = PairingHarness(central: .test(.noInputNoOutput, seed: 1), peripheral: .test(.noInputNoOutput, seed: 9))
        var data = try h.peripheral.localOOBData()
        data.confirm[0] ^= 1
        h.central.peerOOBData = data
        h.run()
        #expect(h.failures[.central] == .local(.confirmValueFailed))
        #expect(h.failures[.peripheral] == .remote(.confirmValueFailed))
        #expect(h.results.isEmpty)
    }
}
