import BluewireCore
import BluewireCrypto
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import BluewireL2CAP
import BluewireSMP
import HostTestSupport
import Testing

/// The engine's Security Manager, two engines paired with each other over `LinkedEngines` (both run the real
/// SMP state machine and swift-crypto; the test only plays the controllers and the users).
@Suite("Host engine: pairing and encryption")
struct SecurityEngineTests {
    static let irk: [UInt8] = (0..<16).map { UInt8(0xA0 + $0) }
    static let identity = SMPAddress(isRandom: true, octets: [0x02, 0xB0, 0x00, 0x17, 0x5A, 0xC4])

    @Test("SC Just Works: both links encrypted unauthenticated, same LTK bonded on both sides, IRK distributed")
    func secureConnectionsJustWorks() throws {
        var link = try LinkedEngines(
            central: PairingConfiguration(ioCapability: .noInputNoOutput),
            peripheral: PairingConfiguration(ioCapability: .noInputNoOutput, identityResolvingKey: Self.irk,
                                             identityAddress: Self.identity))
        let pair = link.central.perform(.pair(connection: link.handle))
        link.pump()
        #expect(link.central.result(pair) == .success(.secured(.encryptedUnauthenticated)))
        // During pairing the key is the SC LTK with EDIV and Rand zero (Core Vol 3 Part H §2.4.4).
        #expect(link.encryptionRequest?.encryptedDiversifier == 0 && link.encryptionRequest?.randomNumber == 0)
        #expect(link.encryptionStatuses == [0])
        let centralEvents = link.central.takeEvents()
        let peripheralEvents = link.peripheral.takeEvents()
        let change = HostEngineEvent.encryptionChanged(connection: link.handle, level: .encryptedUnauthenticated, keySize: 16)
        #expect(centralEvents.encryptionChanges == [change])
        #expect(peripheralEvents.encryptionChanges == [change])
        let centralKeys = try #require(centralEvents.pairedKeys)
        let peripheralKeys = try #require(peripheralEvents.pairedKeys)
        #expect(centralKeys.longTermKey != nil && centralKeys.longTermKey == peripheralKeys.longTermKey)
        #expect(centralKeys.longTermKey == link.encryptionRequest?.longTermKey)
        #expect(centralKeys.peerKeys.identityResolvingKey == Self.irk)
        #expect(centralKeys.peerKeys.identityAddress == Self.identity)
        #expect(link.central.engine.bonds.map(\.peer) == [LinkedEngines.peripheralAddress])
        #expect(link.peripheral.engine.bonds.map(\.peer) == [LinkedEngines.centralAddress])
        #expect(link.central.engine.security(connection: link.handle)?.level == .encryptedUnauthenticated)
    }

    @Test("an SPSM that requires encryption refuses the central before pairing and accepts it after (SMP sets the link security L2CAP checks)")
    func pairingOpensEncryptedChannels() throws {
        var link = try LinkedEngines(
            central: PairingConfiguration(ioCapability: .noInputNoOutput),
            peripheral: PairingConfiguration(ioCapability: .noInputNoOutput))
        let psm = SPSM(0x0081)
        link.peripheral.perform(.registerServer(spsm: psm, parameters: CreditBasedChannelParameters(), security: .encrypted))
        let before = link.central.perform(.openChannel(connection: link.handle, spsm: psm, parameters: CreditBasedChannelParameters()))
        link.pump()
        #expect(link.central.result(before) == .failure(.channelRefused(.refused(.insufficientAuthentication))))
        let pair = link.central.perform(.pair(connection: link.handle))
        link.pump()
        #expect(link.central.result(pair) == .success(.secured(.encryptedUnauthenticated)))
        let after = link.central.perform(.openChannel(connection: link.handle, spsm: psm, parameters: CreditBasedChannelParameters()))
        link.pump()
        guard case .success(.channelOpened)? = link.central.result(after) else {
            Issue.record("the channel did not open after pairing: \(String(describing: link.central.result(after)))")
            return
        }
    }

    @Test("a read_encrypted characteristic: the Insufficient Encryption refusal makes the central pair, and the read is answered (§10.3.2)")
    func pairingUnlocksEncryptedAttributes() throws {
        var link = try LinkedEngines(
            central: PairingConfiguration(ioCapability: .noInputNoOutput),
            peripheral: PairingConfiguration(ioCapability: .noInputNoOutput))
        var builder = GATTDatabaseBuilder()
        try builder.addService(BluetoothUUID(0xFFF0))
        let secret = try builder.addCharacteristic(
            BluetoothUUID(0xFFF1), properties: [.read], permissions: [.readEncrypted], value: .cached([0x5E, 0xC2]))
        link.peripheral.engine.setDatabase(builder.build())
        link.discover()
        let read = link.central.perform(.gatt(connection: link.handle, .read(handle: secret.valueHandle)))
        link.pump()
        #expect(link.central.result(read) == .success(.value([0x5E, 0xC2])))
        #expect(link.central.engine.security(connection: link.handle)?.level == .encryptedUnauthenticated)
        #expect(link.central.events.filter { if case .paired = $0 { return true }; return false }.count == 1)
    }

    @Test("an authenticated-only characteristic and a central without input or output: Insufficient Authentication, no pairing attempted")
    func justWorksCannotAuthenticate() throws {
        var link = try LinkedEngines(
            central: PairingConfiguration(ioCapability: .noInputNoOutput),
            peripheral: PairingConfiguration(ioCapability: .displayOnly))
        var builder = GATTDatabaseBuilder()
        try builder.addService(BluetoothUUID(0xFFF0))
        let secret = try builder.addCharacteristic(
            BluetoothUUID(0xFFF1), properties: [.read], permissions: [.readAuthenticated], value: .cached([0xA7]))
        link.peripheral.engine.setDatabase(builder.build())
        link.discover()
        let read = link.central.perform(.gatt(connection: link.handle, .read(handle: secret.valueHandle)))
        link.pump()
        guard case .failure(.gatt(let error))? = link.central.result(read) else {
            Issue.record("expected Insufficient Authentication, got \(String(describing: link.central.result(read)))")
            return
        }
        #expect(error.attErrorCode == .insufficientAuthentication)
        #expect(link.central.engine.security(connection: link.handle)?.level == .unencrypted)
        #expect(!link.central.events.contains { if case .paired = $0 { return true }; return false })
    }

    @Test("a pairing the peripheral's user refuses: the read that asked for it fails with the pairing's reason; the next one works after pairing")
    func refusedPairingFailsTheRead() throws {
        var link = try LinkedEngines(
            central: PairingConfiguration(ioCapability: .displayYesNo),
            peripheral: PairingConfiguration(ioCapability: .displayYesNo))
        var builder = GATTDatabaseBuilder()
        try builder.addService(BluetoothUUID(0xFFF0))
        let secret = try builder.addCharacteristic(
            BluetoothUUID(0xFFF1), properties: [.read], permissions: [.readAuthenticated], value: .cached([0xA7]))
        link.peripheral.engine.setDatabase(builder.build())
        link.discover()
        let read = link.central.perform(.gatt(connection: link.handle, .read(handle: secret.valueHandle)))
        link.pump()
        // Numeric Comparison (DisplayYesNo both sides, MITM asked for by the refusal): the peripheral's user says no.
        guard link.peripheral.events.contains(where: { if case .numericComparison = $0 { return true }; return false }) else {
            Issue.record("no numeric comparison: \(link.peripheral.events)")
            return
        }
        _ = link.central.perform(.confirmReply(connection: link.handle, accepted: true))
        _ = link.peripheral.perform(.confirmReply(connection: link.handle, accepted: false))
        link.pump()
        #expect(link.central.result(read) == Result<HostCompletion, HostEngineError>.failure(.security(.pairingFailed(.remote(.numericComparisonFailed)))))
        #expect(link.central.engine.security(connection: link.handle)?.level == .unencrypted)
    }

    @Test("SC Passkey Entry: the peripheral displays, the central types; a wrong passkey fails both sides")
    func secureConnectionsPasskey() throws {
        for correct in [true, false] {
            var link = try LinkedEngines(
                central: PairingConfiguration(ioCapability: .keyboardOnly, mitmRequired: true),
                peripheral: PairingConfiguration(ioCapability: .displayOnly, mitmRequired: true))
            let pair = link.central.perform(.pair(connection: link.handle))
            link.pump()
            let shown = try #require(link.peripheral.takeEvents().passkeyDisplayed)
            #expect(link.central.takeEvents() == [.passkeyRequest(connection: link.handle)])
            let typed = correct ? shown : (shown + 1) % 1_000_000
            let reply = link.central.perform(.passkeyReply(connection: link.handle, passkey: typed))
            link.pump()
            #expect(link.central.result(reply) == .success(.done))
            if correct {
                #expect(link.central.result(pair) == .success(.secured(.secureConnectionsAuthenticated)))
                #expect(link.peripheral.engine.security(connection: link.handle)?.level == .secureConnectionsAuthenticated)
                #expect(link.central.engine.bonds.first?.authenticated == true)
            } else {
                // The responder's check of the initiator's confirm fails first (§2.3.5.6.3).
                #expect(link.central.result(pair) == .failure(.security(.pairingFailed(.remote(.confirmValueFailed)))))
                #expect(link.peripheral.takeEvents().pairingFailure == .local(.confirmValueFailed))
                #expect(link.encryptionStatuses.isEmpty)
                #expect(link.central.engine.bonds.isEmpty && link.peripheral.engine.bonds.isEmpty)
            }
        }
    }

    @Test("a failed passkey: no new pairing with that peer for 2 s on either side (Repeated Attempts, §2.3.6), then pairing works")
    func repeatedAttemptsBackOff() throws {
        var link = try LinkedEngines(
            central: PairingConfiguration(ioCapability: .keyboardOnly, mitmRequired: true),
            peripheral: PairingConfiguration(ioCapability: .displayOnly, mitmRequired: true))
        let first = link.central.perform(.pair(connection: link.handle))
        link.pump()
        let shown = try #require(link.peripheral.takeEvents().passkeyDisplayed)
        _ = link.central.perform(.passkeyReply(connection: link.handle, passkey: (shown + 1) % 1_000_000))
        link.pump()
        #expect(link.central.result(first) == .failure(.security(.pairingFailed(.remote(.confirmValueFailed)))))

        // At once: the central itself waits, and sends nothing.
        let again = link.central.perform(.pair(connection: link.handle))
        #expect(link.central.result(again) == .failure(.security(.pairingFailed(.local(.repeatedAttempts)))))
        #expect(link.central.takeWritten().isEmpty)

        // The central's interval is over, the peripheral's is not: its answer is Pairing Failed, Repeated Attempts.
        link.central.advance(by: .seconds(2))
        let refused = link.central.perform(.pair(connection: link.handle))
        link.pump()
        #expect(link.central.result(refused) == .failure(.security(.pairingFailed(.remote(.repeatedAttempts)))))
        #expect(!link.peripheral.events.contains { if case .passkeyDisplay = $0 { return true }; return false })

        // Both intervals over: the pairing runs, and succeeds.
        link.peripheral.advance(by: .seconds(2))
        _ = link.peripheral.takeEvents()
        let last = link.central.perform(.pair(connection: link.handle))
        link.pump()
        let passkey = try #require(link.peripheral.takeEvents().passkeyDisplayed)
        _ = link.central.perform(.passkeyReply(connection: link.handle, passkey: passkey))
        link.pump()
        #expect(link.central.result(last) == .success(.secured(.secureConnectionsAuthenticated)))
    }

    @Test("SC Numeric Comparison: both users see the same number and confirm")
    func numericComparison() throws {
        var link = try LinkedEngines(
            central: PairingConfiguration(ioCapability: .displayYesNo, mitmRequired: true),
            peripheral: PairingConfiguration(ioCapability: .displayYesNo, mitmRequired: true))
        let pair = link.central.perform(.pair(connection: link.handle))
        link.pump()
        let centralValue = try #require(link.central.takeEvents().comparedValue)
        let peripheralValue = try #require(link.peripheral.takeEvents().comparedValue)
        #expect(centralValue == peripheralValue)
        link.peripheral.perform(.confirmReply(connection: link.handle, accepted: true))
        link.central.perform(.confirmReply(connection: link.handle, accepted: true))
        link.pump()
        #expect(link.central.result(pair) == .success(.secured(.secureConnectionsAuthenticated)))
    }

    @Test("Numeric Comparison refused by the peripheral's user: Numeric Comparison Failed, no encryption")
    func numericComparisonRefused() throws {
        var link = try LinkedEngines(
            central: PairingConfiguration(ioCapability: .displayYesNo, mitmRequired: true),
            peripheral: PairingConfiguration(ioCapability: .displayYesNo, mitmRequired: true))
        let pair = link.central.perform(.pair(connection: link.handle))
        link.pump()
        link.peripheral.perform(.confirmReply(connection: link.handle, accepted: false))
        link.pump()
        #expect(link.central.result(pair) == .failure(.security(.pairingFailed(.remote(.numericComparisonFailed)))))
        #expect(link.encryptionStatuses.isEmpty)
        let late = link.central.perform(.confirmReply(connection: link.handle, accepted: true))
        #expect(link.central.result(late) == .failure(.security(.noPairingInProgress)))
    }

    @Test("legacy Passkey Entry: an authenticated STK, then level 3 (authenticated, not SC)")
    func legacyPasskey() throws {
        var link = try LinkedEngines(
            central: PairingConfiguration(ioCapability: .keyboardOnly, mitmRequired: true, secureConnections: false),
            peripheral: PairingConfiguration(ioCapability: .displayOnly, mitmRequired: true, secureConnections: false))
        let pair = link.central.perform(.pair(connection: link.handle))
        link.pump()
        let shown = try #require(link.peripheral.takeEvents().passkeyDisplayed)
        link.central.perform(.passkeyReply(connection: link.handle, passkey: shown))
        link.pump()
        #expect(link.central.result(pair) == .success(.secured(.authenticated)))
        #expect(link.peripheral.takeEvents().encryptionChanges == [
            .encryptionChanged(connection: link.handle, level: .authenticated, keySize: 16),
        ])
        #expect(link.central.engine.bonds.first?.level == .authenticated)
    }

    @Test("legacy Just Works: STK encryption, then the peripheral's LTK/EDIV/Rand re-encrypt the next connection")
    func legacyBondReencrypts() throws {
        var link = try LinkedEngines(
            central: PairingConfiguration(ioCapability: .noInputNoOutput, secureConnections: false),
            peripheral: PairingConfiguration(ioCapability: .noInputNoOutput, secureConnections: false))
        let pair = link.central.perform(.pair(connection: link.handle))
        link.pump()
        #expect(link.central.result(pair) == .success(.secured(.encryptedUnauthenticated)))
        let bond = try #require(link.central.engine.bonds.first)
        let distributed = try #require(bond.peerKeys.longTermKey)
        #expect(bond.longTermKey == nil && bond.peerKeys.ediv != nil && bond.peerKeys.rand?.count == 8)
        #expect(link.peripheral.engine.bonds.first?.localKeys.longTermKey == distributed)

        link.disconnect()
        link.connect()
        let encrypt = link.central.perform(.encrypt(connection: link.handle))
        link.pump()
        #expect(link.central.result(encrypt) == .success(.secured(.encryptedUnauthenticated)))
        #expect(link.encryptionRequest?.longTermKey == distributed)
        #expect(link.encryptionRequest?.encryptedDiversifier == bond.peerKeys.ediv)
        #expect(link.encryptionStatuses == [0, 0])
        #expect(link.peripheral.takeEvents().encryptionChanges.count == 1)
        #expect(link.central.takeEvents().pairedKeys == nil)
    }

    @Test("SC bond: a peripheral's Security Request on the next connection is answered by encrypting with the LTK")
    func securityRequestUsesBond() throws {
        var link = try LinkedEngines(
            central: PairingConfiguration(ioCapability: .noInputNoOutput),
            peripheral: PairingConfiguration(ioCapability: .noInputNoOutput))
        // First connection: the peripheral asks (§3.6.7), the central pairs.
        let asked = link.peripheral.perform(.pair(connection: link.handle))
        link.pump()
        #expect(link.peripheral.result(asked) == .success(.secured(.encryptedUnauthenticated)))
        let ltk = try #require(link.central.engine.bonds.first?.longTermKey)

        link.disconnect()
        link.connect()
        let again = link.peripheral.perform(.pair(connection: link.handle))
        link.pump()
        #expect(link.peripheral.result(again) == .success(.secured(.encryptedUnauthenticated)))
        #expect(link.encryptionRequest?.longTermKey == ltk)
        #expect(link.encryptionStatuses == [0, 0])
        #expect(link.central.takeEvents().pairedKeys == nil)
    }

    @Test("encrypting a link already encrypted: Encryption Key Refresh Complete (§7.7.39) completes the request")
    func keyRefresh() throws {
        var link = try LinkedEngines(
            central: PairingConfiguration(ioCapability: .noInputNoOutput),
            peripheral: PairingConfiguration(ioCapability: .noInputNoOutput))
        link.central.perform(.pair(connection: link.handle))
        link.pump()
        _ = link.central.takeEvents()
        let refresh = link.central.perform(.encrypt(connection: link.handle))
        link.pump()
        #expect(link.encryptionStatuses == [0, 0])
        #expect(link.central.result(refresh) == .success(.secured(.encryptedUnauthenticated)))
        #expect(link.central.takeEvents().encryptionChanges == [
            .encryptionChanged(connection: link.handle, level: .encryptedUnauthenticated, keySize: 16),
        ])
    }

    @Test("a bonded central back with a resolvable private address: the peripheral resolves it with the IRK")
    func resolvablePrivateAddress() throws {
        let irk: [UInt8] = (0..<16).map { UInt8(0x30 + $0) }
        var link = try LinkedEngines(
            central: PairingConfiguration(ioCapability: .noInputNoOutput, identityResolvingKey: irk,
                                          identityAddress: LinkedEngines.centralAddress.smpForm),
            peripheral: PairingConfiguration(ioCapability: .noInputNoOutput))
        link.central.perform(.pair(connection: link.handle))
        link.pump()
        #expect(link.peripheral.engine.bonds.first?.peerKeys.identityResolvingKey == irk)

        // prand with the top bits 0b01 (Core Vol 6 Part B §1.3.2.2), hash = ah(IRK, prand).
        let prand: [UInt8] = [0x5A, 0x12, 0x34]
        func address(_ octets: [UInt8]) -> BluetoothAddress {
            BluetoothAddress(value: octets.reduce(0) { $0 << 8 | UInt64($1) }, type: .random)
        }
        let hash = try SwiftCryptoSMP().ah(irk.reversed(), prand)
        for (seenAs, status) in [(address(prand + hash), UInt8(0)), (address(prand + [hash[0] ^ 1, hash[1], hash[2]]), 0x06)] {
            link.disconnect()
            link.centralSeenAs = seenAs
            link.connect()
            let encrypt = link.central.perform(.encrypt(connection: link.handle))
            link.pump()
            #expect(link.encryptionStatuses.last == status, "\(seenAs)")
            #expect((link.central.result(encrypt) == .success(.secured(.encryptedUnauthenticated))) == (status == 0))
        }
    }

    @Test("a peer without a bond: encrypt is refused, a forgotten bond gets PIN or Key Missing")
    func missingBond() throws {
        var link = try LinkedEngines(
            central: PairingConfiguration(ioCapability: .noInputNoOutput),
            peripheral: PairingConfiguration(ioCapability: .noInputNoOutput))
        let refused = link.central.perform(.encrypt(connection: link.handle))
        #expect(link.central.result(refused) == .failure(.security(.notBonded)))
        link.central.perform(.pair(connection: link.handle))
        link.pump()
        link.disconnect()
        link.connect()
        link.peripheral.engine.removeBond(peer: LinkedEngines.centralAddress)
        let encrypt = link.central.perform(.encrypt(connection: link.handle))
        link.pump()
        #expect(link.central.result(encrypt) == .failure(.security(.encryptionFailed(HCIStatus(0x06)))))
        #expect(link.central.engine.security(connection: link.handle)?.level == .unencrypted)
    }

    @Test("SMP timeout: 30 s without an answer fails the pairing and closes SMP on the link (§3.4)")
    func smpTimeout() throws {
        var link = try LinkedEngines(
            central: PairingConfiguration(ioCapability: .noInputNoOutput),
            peripheral: PairingConfiguration(ioCapability: .noInputNoOutput))
        let start = link.central.now
        let pair = link.central.perform(.pair(connection: link.handle))
        _ = link.central.takeWritten()  // the Pairing Request is lost
        #expect(link.central.engine.nextDeadline == start + .seconds(30))
        link.central.advance(by: .seconds(29))
        #expect(link.central.result(pair) == nil)
        link.central.advance(by: .seconds(1))
        #expect(link.central.result(pair) == .failure(.security(.pairingFailed(.timeout))))
        #expect(link.central.takeEvents().pairingFailure == .timeout)
        #expect(link.central.engine.nextDeadline == nil)
        let again = link.central.perform(.pair(connection: link.handle))
        #expect(link.central.result(again) == .failure(.security(.pairingFailed(.timeout))))
        #expect(link.central.takeWritten().isEmpty)
    }

    @Test("without a security configuration a Pairing Request gets Pairing Not Supported")
    func notConfigured() throws {
        var link = try LinkedEngines(central: PairingConfiguration(ioCapability: .noInputNoOutput), peripheral: nil)
        let pair = link.central.perform(.pair(connection: link.handle))
        link.pump()
        #expect(link.central.result(pair) == .failure(.security(.pairingFailed(.remote(.pairingNotSupported)))))
        let refused = link.peripheral.perform(.pair(connection: link.handle))
        #expect(link.peripheral.result(refused) == .failure(.security(.notConfigured)))
    }
}
