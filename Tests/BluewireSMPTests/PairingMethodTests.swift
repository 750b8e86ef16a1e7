import BluewireSMP
import Testing

/// Core Vol 3 Part H §2.3.5.1 tables 2.6–2.8.
@Suite struct PairingMethodTests {
    typealias IO = IOCapability
    /// Table 2.8, rows = responder, columns = initiator (DisplayOnly, DisplayYesNo, KeyboardOnly,
    /// NoInputNoOutput, KeyboardDisplay); legacy entry, SC entry.
    static let j = PairingMethod.justWorks
    static let n = PairingMethod.numericComparison
    static let rd = PairingMethod.passkeyEntry(.responderDisplays)
    static let id = PairingMethod.passkeyEntry(.initiatorDisplays)
    static let bi = PairingMethod.passkeyEntry(.bothInput)
    static let columns: [IO] = [.displayOnly, .displayYesNo, .keyboardOnly, .noInputNoOutput, .keyboardDisplay]
    static let legacy: [IO: [PairingMethod]] = [
        .displayOnly: [j, j, rd, j, rd],
        .displayYesNo: [j, j, rd, j, rd],
        .keyboardOnly: [id, id, bi, j, id],
        .noInputNoOutput: [j, j, j, j, j],
        .keyboardDisplay: [id, id, rd, j, id],
    ]
    static let secure: [IO: [PairingMethod]] = [
        .displayOnly: [j, j, rd, j, rd],
        .displayYesNo: [j, n, rd, j, n],
        .keyboardOnly: [id, id, bi, j, id],
        .noInputNoOutput: [j, j, j, j, j],
        .keyboardDisplay: [id, n, rd, j, n],
    ]

    @Test("table 2.8, every pair of IO capabilities, legacy and SC", arguments: IO.allCases)
    func table28(responder: IO) {
        for (i, initiator) in Self.columns.enumerated() {
            #expect(PairingMethod.fromIOCapabilities(initiator: initiator, responder: responder, secureConnections: false) == Self.legacy[responder]![i])
            #expect(PairingMethod.fromIOCapabilities(initiator: initiator, responder: responder, secureConnections: true) == Self.secure[responder]![i])
        }
    }

    func features(_ io: IO, oob: Bool = false, mitm: Bool) -> PairingFeatures {
        PairingFeatures(
            ioCapability: io, oobDataPresent: oob,
            authRequirements: AuthRequirements(bonding: true, mitm: mitm, secureConnections: true),
            initiatorKeyDistribution: [], responderKeyDistribution: [])
    }

    @Test func oobAndMitmRules() {
        let kd = IO.keyboardDisplay
        // Legacy (table 2.6): OOB only when both have OOB data.
        #expect(PairingMethod.select(initiator: features(kd, oob: true, mitm: true), responder: features(kd, mitm: true), secureConnections: false) == .passkeyEntry(.initiatorDisplays))
        #expect(PairingMethod.select(initiator: features(kd, oob: true, mitm: true), responder: features(kd, oob: true, mitm: true), secureConnections: false) == .outOfBand)
        // SC (table 2.7): OOB when either has OOB data.
        #expect(PairingMethod.select(initiator: features(kd, oob: true, mitm: false), responder: features(kd, mitm: false), secureConnections: true) == .outOfBand)
        // Neither asks for MITM: Just Works whatever the IO capabilities.
        #expect(PairingMethod.select(initiator: features(kd, mitm: false), responder: features(kd, mitm: false), secureConnections: true) == .justWorks)
        // One asks for MITM: the IO table.
        #expect(PairingMethod.select(initiator: features(kd, mitm: false), responder: features(kd, mitm: true), secureConnections: true) == .numericComparison)
        #expect(!PairingMethod.justWorks.isAuthenticated && PairingMethod.numericComparison.isAuthenticated)
    }

    @Test func keySizeNegotiation() {
        #expect(negotiateEncryptionKeySize(initiatorMaximum: 16, responderMaximum: 10, applicationMinimum: 7) == 10)
        #expect(negotiateEncryptionKeySize(initiatorMaximum: 7, responderMaximum: 16, applicationMinimum: 7) == 7)
        #expect(negotiateEncryptionKeySize(initiatorMaximum: 12, responderMaximum: 16, applicationMinimum: 16) == nil)
        #expect(negotiateEncryptionKeySize(initiatorMaximum: 6, responderMaximum: 16, applicationMinimum: 7) == nil)
    }
}
