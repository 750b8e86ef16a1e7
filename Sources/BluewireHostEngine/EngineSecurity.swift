import BluewireCore
import BluewireSMP

/// The engine's Security Manager state: the configuration and the in-memory bond store.
struct EngineSecurity: Sendable {
    var configuration: HostSecurityConfiguration?
    /// Bonds by the peer's address on the link that paired.
    var bonds: [BluetoothAddress: HostBond] = [:]
}

/// The level and key size the encryption being started will give, known when the key is chosen.
struct PendingEncryption: Hashable, Sendable {
    var level: LinkSecurityLevel
    var keySize: UInt8
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

    /// A pairing is under way (started and not finished).
    var isPairing: Bool {
        guard let session else { return false }
        return !session.isFinished && !session.isIdle
    }
}

extension BluetoothAddress {
    /// The address as SMP carries it in f5, f6 and c1 (Core Vol 3 Part H §2.2): type and six octets,
    /// least significant first.
    var smpAddress: SMPAddress {
        SMPAddress(isRandom: type.isRandom, octets: (0..<6).map { UInt8(truncatingIfNeeded: value >> UInt64(8 * $0)) })
    }
}
