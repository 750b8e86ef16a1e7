import BluewireCore
import BluewireSMP
import Testing

/// LE legacy pairing with a TK received out of band (Core Vol 3 Part H §2.3.5.4, table 2.6).
@Suite("SMP session: legacy OOB")
struct LegacyOOBSessionTests {
    static let tk: [UInt8] = (0..<16).map { UInt8(truncatingIfNeeded: 0xA0 + $0 * 7) }

    static func legacy(_ io: IOCapability, tk: [UInt8]?, seed: UInt8) -> PairingConfiguration {
        var configuration = PairingConfiguration.test(io, sc: false, seed: seed)
        configuration.legacyOOBTemporaryKey = tk
        return configuration
    }

    @Test("both sides have the TK: OOB is chosen over the IO capabilities, authenticated, same STK-encrypted link")
    func bothHaveTheKey() {
        var h = PairingHarness(
            central: Self.legacy(.noInputNoOutput, tk: Self.tk, seed: 1),
            peripheral: Self.legacy(.noInputNoOutput, tk: Self.tk, seed: 9))
        h.run()
        #expect(h.failures.isEmpty)
        #expect(h.results[.central]?.method == .outOfBand && h.results[.peripheral]?.method == .outOfBand)
        #expect(h.results[.central]?.authenticated == true && h.results[.central]?.secureConnections == false)
        #expect(h.encryptionKeys[.central] != nil && h.encryptionKeys[.central] == h.encryptionKeys[.peripheral])
        #expect(h.sent.contains { $0.opcode == .pairingConfirm })
    }

    @Test("different TKs: the confirm check fails (Confirm Value Failed)")
    func differentKeys() {
        var other = Self.tk
        other[15] ^= 1
        var h = PairingHarness(
            central: Self.legacy(.noInputNoOutput, tk: Self.tk, seed: 1),
            peripheral: Self.legacy(.noInputNoOutput, tk: other, seed: 9))
        h.run()
        #expect(h.failures[.peripheral] == .local(.confirmValueFailed))
        #expect(h.failures[.central] == .remote(.confirmValueFailed))
        #expect(h.results.isEmpty)
    }

    @Test("only one side has a TK: not OOB (table 2.6 needs both flags), Just Works")
    func oneSideOnly() {
        var h = PairingHarness(
            central: Self.legacy(.noInputNoOutput, tk: Self.tk, seed: 1),
            peripheral: Self.legacy(.noInputNoOutput, tk: nil, seed: 9))
        h.run()
        #expect(h.failures.isEmpty)
        #expect(h.results[.central]?.method == .justWorks)
    }

    @Test("both flags set but this side has only LE SC OOB data, no TK: OOB Not Available")
    func noTemporaryKey() throws {
        var central = PairingConfiguration.test(.noInputNoOutput, sc: true, seed: 1)
        central.legacyOOBTemporaryKey = nil
        var h = PairingHarness(central: central, peripheral: Self.legacy(.noInputNoOutput, tk: Self.tk, seed: 9))
        h.central.peerOOBData = (random: [UInt8](repeating: 1, count: 16), confirm: [UInt8](repeating: 2, count: 16))
        h.run()
        #expect(h.failures[.central] == .local(.oobNotAvailable))
        #expect(h.failures[.peripheral] == .remote(.oobNotAvailable))
    }

    @Test("a device offering LE SC does not raise the OOB flag for a TK: SC Just Works between two such devices")
    func secureConnectionsIgnoresTheKey() {
        var central = PairingConfiguration.test(.noInputNoOutput, seed: 1)
        central.legacyOOBTemporaryKey = Self.tk
        var peripheral = PairingConfiguration.test(.noInputNoOutput, seed: 9)
        peripheral.legacyOOBTemporaryKey = Self.tk
        var h = PairingHarness(central: central, peripheral: peripheral)
        h.run()
        #expect(h.results[.central]?.method == .justWorks && h.results[.central]?.secureConnections == true)
    }
}
