import BluewireCore
import BluewireSMP

// Left out of builds with BLUEWIRE_NO_SECURITY (the firmware images); HostEngine+NoSecurity stands in.
#if !BLUEWIRE_NO_SECURITY

/// The engine's Security Manager state: the configuration and the in-memory bond store.
///
/// The maps are `LinearMap`s, as the engine's other per-peer state: a host has a handful of bonds, and a
/// Dictionary here linked Hasher, three Dictionary specialisations and the soft-float code of its capacity
/// arithmetic into the firmware images (about 9 KB of the secured peripheral's flash).
struct EngineSecurity: Sendable {
    var configuration: HostSecurityConfiguration?
    /// Bonds by the peer's address on the link that paired.
    var bonds: LinearMap<BluetoothAddress, HostBond> = LinearMap()
    /// The last `HostBond.lastUsed` given: the engine's count of bond uses (HostEngine+BondStore).
    var bondUses: UInt64 = 0
    /// Peers whose last pairings failed, and until when a new one waits (HostEngine+PairingBackOff).
    var backOffs: LinearMap<BluetoothAddress, PairingBackOff> = LinearMap()
    /// Bonded peers' identity addresses → the resolvable private address each was last seen with (in a
    /// scan report or a connection): where `.connect(identity)` goes. One entry per bond at most.
    var currentAddresses: LinearMap<BluetoothAddress, BluetoothAddress> = LinearMap()
    /// The resolvable private address advertised from, with privacy on (HostEngine+Privacy).
    var privacy = LocalPrivacy()
    /// The controller's resolving list (HostEngine+ResolvingList).
    var resolvingList = ControllerResolvingList()
    /// With `SMPCrypto.controller`: the crypto command in flight (HostEngine+ControllerCrypto).
    var cryptoCommand: ControllerCryptoCommand?
    /// Crypto commands sent to the controller since the engine started (each one HCI round trip).
    var cryptoCommandsSent = 0
}

/// The level and key size the encryption being started will give, known when the key is chosen.
struct PendingEncryption: Hashable, Sendable {
    var level: LinkSecurityLevel
    var keySize: UInt8
    /// The bond whose key it is (its key in the store), to note its use once the link is encrypted.
    var bond: BluetoothAddress? = nil
}

/// Security state of one link (Core Vol 3 Part H; Vol 3 Part C §10.2.1).
struct LinkSecurity: Sendable {
    /// The pairing on this link (running, or the last one, finished).
    var session: PairingSession<SMPCrypto>?
    var level: LinkSecurityLevel = .unencrypted
    var keySize: UInt8 = 0
    var pending: PendingEncryption?
    /// `.pair` requests waiting for the pairing to end.
    var pairRequests: [HostRequestID] = []
    /// `.encrypt` requests waiting for Encryption Change.
    var encryptRequests: [HostRequestID] = []
    /// The SMP timer expired: no more SMP PDUs on this link, and no new pairing on it (§3.4).
    var timedOut = false
    /// The association model of the last pairing that succeeded on this link (§2.3.5.1).
    var pairedMethod: PairingMethod?
    /// With the controller's crypto: its answers for the input being run, the input waiting for one (and
    /// what it waits for), and inputs that arrived meanwhile, in order (HostEngine+ControllerCrypto).
    var cryptoAnswers: [ControllerCryptoAnswer] = []
    var cryptoWaiting: (input: PairingInput, request: ControllerCryptoRequest)?
    var cryptoQueue: [PairingInput] = []

    /// A pairing is under way (started and not finished).
    var isPairing: Bool {
        guard let session else { return false }
        return !session.isFinished && !session.isIdle
    }
}

extension SMPAddress {
    /// The address as the rest of the stack spells it (identity addresses arrive this way, §3.6.5).
    var bluetoothAddress: BluetoothAddress? {
        guard octets.count == 6 else { return nil }
        var value: UInt64 = 0
        for (index, octet) in octets.enumerated() { value |= UInt64(octet) << UInt64(8 * index) }
        return BluetoothAddress(value: value, type: isRandom ? .random : .public)
    }
}

extension BluetoothAddress {
    /// The address as SMP carries it in f5, f6 and c1 (Core Vol 3 Part H §2.2): type and six octets,
    /// least significant first.
    var smpAddress: SMPAddress {
        SMPAddress(isRandom: type.isRandom, octets: (0..<6).map { UInt8(truncatingIfNeeded: value >> UInt64(8 * $0)) })
    }
}

extension HostEngine {
    /// The bond for a peer address: stored under it, or the bond whose identity address it is, or, for a
    /// resolvable private address, the bond whose IRK resolves it (Core Vol 3 Part C §10.8.2.3, ah in
    /// Vol 3 Part H §2.2.2): a bonded phone comes back with a new address every few minutes.
    func bond(for peer: BluetoothAddress) -> HostBond? {
        if let bond = security.bonds[peer] { return bond }
        let peerSMP = peer.smpAddress
        if let bond = security.bonds.values.first(where: { $0.peerKeys.identityAddress == peerSMP }) { return bond }
        guard peer.randomKind == .resolvablePrivate, let crypto = security.configuration?.crypto else { return nil }
        return security.bonds.values.sorted(by: { $0.peer < $1.peer }).first { $0.resolves(peer, crypto: crypto) }
    }

    /// The identity address a bond's IRK resolves `address` (a resolvable private address) to, remembered
    /// as that peer's current address; nil for any other address or without such a bond.
    mutating func resolveIdentity(_ address: BluetoothAddress) -> BluetoothAddress? {
        guard address.randomKind == .resolvablePrivate, let bond = bond(for: address),
              let identity = bond.peerKeys.identityAddress?.bluetoothAddress else { return nil }
        security.currentAddresses[identity] = address
        return identity
    }

    /// Where to reach `peer`: the private address a bonded peer with this identity was last seen with, else
    /// `peer` itself.
    func currentAddress(of peer: BluetoothAddress) -> BluetoothAddress {
        security.currentAddresses[peer] ?? peer
    }

    /// Stores a new bond, replacing an older one with the same peer identity (it paired again, perhaps
    /// from another resolvable private address), and making room for it as the store's policy says
    /// (HostEngine+BondStore). False when the policy keeps every stored bond over this one: it is not
    /// stored.
    mutating func store(_ bond: HostBond) -> Bool {
        if let identity = bond.peerKeys.identityAddress {
            for old in security.bonds.values where old.peerKeys.identityAddress == identity {
                security.bonds[old.peer] = nil
            }
        }
        guard makeRoom(for: bond) else {
            resolvingListChanged()
            emit(.bondNotStored(peer: bond.peer, authenticated: bond.authenticated))
            return false
        }
        var stored = bond
        stored.lastUsed = nextBondUse()
        security.bonds[bond.peer] = stored
        resolvingListChanged()
        return true
    }
}

#endif  // !BLUEWIRE_NO_SECURITY
