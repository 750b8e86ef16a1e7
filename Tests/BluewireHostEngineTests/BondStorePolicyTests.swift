import BluewireCore
import BluewireCrypto
import BluewireHostEngine
import BluewireSMP
import Testing

/// The bond store's limit and eviction policy (`BondStorePolicy`), on two engines running the real
/// Security Manager (`LinkedEngines`): the peripheral keeps a few bonds while centrals pair from new
/// random addresses, as a central rotating its address did to fill an unlimited store.
@Suite("Host engine: the bond store's limit and eviction policy")
struct BondStorePolicyTests {
    static func address(_ n: UInt64) -> BluetoothAddress { BluetoothAddress(value: 0xC1_00_00_00_00_00 | n, type: .random) }
    static let crypto = SMPCrypto(SwiftCryptoSMP())

    /// The peripheral with `policy`; the central pairs from one address after another.
    struct Store {
        var link: LinkedEngines
        /// The central's bond from each pairing, by the address it paired from (to encrypt with later).
        var centralBonds: [BluetoothAddress: HostBond] = [:]
        var policy: BondStorePolicy

        init(_ policy: BondStorePolicy) throws {
            link = try LinkedEngines(central: nil, peripheral: nil)
            self.policy = policy
        }

        var stored: Set<BluetoothAddress> { Set(link.peripheral.engine.bonds.map(\.peer)) }

        /// A new link from a central whose own (static random) address is `address`: a central that
        /// changed its address, as far as the peripheral can tell a stranger.
        mutating func connect(from address: BluetoothAddress) throws {
            link.disconnect()
            var central = EngineDriver(configuration: HostEngineConfiguration(randomAddress: address))
            try LinkedEngines.bringUp(&central)
            link.central = central
            link.centralSeenAs = address
            link.connect()
        }

        /// Pairs from `seenAs`: Just Works, or Numeric Comparison (authenticated) accepted on both sides.
        /// Returns the peripheral's events.
        mutating func pair(from seenAs: BluetoothAddress, authenticated: Bool) throws -> [HostEngineEvent] {
            try connect(from: seenAs)
            let io: IOCapability = authenticated ? .displayYesNo : .noInputNoOutput
            link.central.engine.configureSecurity(HostSecurityConfiguration(
                pairing: PairingConfiguration(ioCapability: io, mitmRequired: authenticated), crypto: BondStorePolicyTests.crypto))
            link.peripheral.engine.configureSecurity(HostSecurityConfiguration(
                pairing: PairingConfiguration(ioCapability: io), crypto: BondStorePolicyTests.crypto, bondStore: policy))
            let pair = link.central.perform(.pair(connection: link.handle))
            link.pump()
            if authenticated {
                link.central.perform(.confirmReply(connection: link.handle, accepted: true))
                link.peripheral.perform(.confirmReply(connection: link.handle, accepted: true))
                link.pump()
            }
            let level: LinkSecurityLevel = authenticated ? .secureConnectionsAuthenticated : .encryptedUnauthenticated
            #expect(link.central.result(pair) == .success(.secured(level)), "pairing from \(seenAs)")
            centralBonds[seenAs] = link.central.engine.bonds.first
            _ = link.central.takeEvents()
            return link.peripheral.takeEvents()
        }

        /// Reconnects from `seenAs` and encrypts with the bond made from there: a use of that bond.
        mutating func reconnect(from seenAs: BluetoothAddress) throws {
            try connect(from: seenAs)
            link.central.engine.configureSecurity(HostSecurityConfiguration(
                pairing: PairingConfiguration(ioCapability: .noInputNoOutput), crypto: BondStorePolicyTests.crypto))
            if let bond = centralBonds[seenAs] { link.central.engine.addBond(bond) }
            let encrypt = link.central.perform(.encrypt(connection: link.handle))
            link.pump()
            guard case .success(.secured)? = link.central.result(encrypt) else {
                Issue.record("encrypting with the bond from \(seenAs): \(String(describing: link.central.result(encrypt)))")
                return
            }
            _ = link.central.takeEvents()
            _ = link.peripheral.takeEvents()
        }
    }

    static func evicted(_ events: [HostEngineEvent]) -> [BluetoothAddress] {
        events.compactMap { if case .bondEvicted(let peer, _) = $0 { return peer }; return nil }
    }

    static func notStored(_ events: [HostEngineEvent]) -> [BluetoothAddress] {
        events.compactMap { if case .bondNotStored(let peer, _) = $0 { return peer }; return nil }
    }

    static func bonded(_ events: [HostEngineEvent]) -> Bool? {
        for case .paired(_, _, let bonded, _) in events { return bonded }
        return nil
    }

    @Test("Just Works bonds beyond the limit evict the unauthenticated bond used longest ago; a reconnection counts as a use")
    func unauthenticatedEvictedOldestUsedFirst() throws {
        var store = try Store(BondStorePolicy(limit: 3))
        let (a, b, c, d, e) = (Self.address(1), Self.address(2), Self.address(3), Self.address(4), Self.address(5))
        for peer in [a, b, c] { #expect(Self.evicted(try store.pair(from: peer, authenticated: false)).isEmpty) }
        #expect(store.stored == [a, b, c])
        // A came back and encrypted with its bond: B is now the one used longest ago.
        try store.reconnect(from: a)
        let fourth = try store.pair(from: d, authenticated: false)
        #expect(Self.evicted(fourth) == [b])
        #expect(Self.bonded(fourth) == true)
        #expect(store.stored == [a, c, d])
        #expect(Self.evicted(try store.pair(from: e, authenticated: false)) == [c])
        #expect(store.stored == [a, d, e])
        #expect(store.link.peripheral.engine.bonds.count == 3)
    }

    @Test("authenticated bonds are kept: Just Works ones go first, and a full store of authenticated bonds stores no new bond")
    func authenticatedKept() throws {
        var store = try Store(BondStorePolicy(limit: 3))
        let peers = (1...8).map { Self.address($0) }
        #expect(Self.evicted(try store.pair(from: peers[0], authenticated: true)).isEmpty)
        #expect(Self.evicted(try store.pair(from: peers[1], authenticated: false)).isEmpty)
        #expect(Self.evicted(try store.pair(from: peers[2], authenticated: false)).isEmpty)
        // Full: an authenticated newcomer evicts the oldest unauthenticated bond, never the authenticated one.
        #expect(Self.evicted(try store.pair(from: peers[3], authenticated: true)) == [peers[1]])
        #expect(Self.evicted(try store.pair(from: peers[4], authenticated: true)) == [peers[2]])
        #expect(store.stored == [peers[0], peers[3], peers[4]])
        // Only authenticated bonds now: a stranger's Just Works pairing secures its link but is not stored.
        let stranger = try store.pair(from: peers[5], authenticated: false)
        #expect(Self.evicted(stranger).isEmpty)
        #expect(Self.notStored(stranger) == [peers[5]])
        #expect(Self.bonded(stranger) == false, "the paired event says the bond was not kept")
        // Nor is a new authenticated one, unless the policy allows evicting authenticated bonds.
        #expect(Self.notStored(try store.pair(from: peers[6], authenticated: true)) == [peers[6]])
        #expect(store.stored == [peers[0], peers[3], peers[4]])
        store.policy.evictsAuthenticated = true
        #expect(Self.evicted(try store.pair(from: peers[7], authenticated: true)) == [peers[0]])
        #expect(store.stored == [peers[3], peers[4], peers[7]])
        // Even then an unauthenticated newcomer displaces no authenticated bond.
        #expect(Self.notStored(try store.pair(from: Self.address(9), authenticated: false)) == [Self.address(9)])
        #expect(store.stored == [peers[3], peers[4], peers[7]])
    }

    @Test("the use order survives a restart through the bond file: the restored store evicts as the old one would have")
    func useOrderSurvivesTheFile() throws {
        var store = try Store(BondStorePolicy(limit: 3))
        let (a, b, c, d) = (Self.address(1), Self.address(2), Self.address(3), Self.address(4))
        for peer in [a, b, c] { _ = try store.pair(from: peer, authenticated: false) }
        try store.reconnect(from: a)
        try store.reconnect(from: b)
        let file = BondFile.encode(store.link.peripheral.engine.bonds)
        #expect(file.contains("\"last_used\":"))
        // A new peripheral engine (a restart) with the bonds from the file.
        var restarted = try Store(BondStorePolicy(limit: 3))
        restarted.centralBonds = store.centralBonds
        for bond in try BondFile.decode(file) { restarted.link.peripheral.engine.addBond(bond) }
        #expect(restarted.stored == [a, b, c])
        #expect(Self.evicted(try restarted.pair(from: d, authenticated: false)) == [c], "C was used longest ago")
    }
}
