import BluewireCore
import BluewireHCI
import BluewireSMP

/// The Security Manager's cryptographic primitives (Core Vol 3 Part H §2.2) as plain function values, so
/// the engine stays one concrete, non-generic type whatever implementation the application picks (swift-crypto
/// on Linux, a hardware AES block or the controller's LE Encrypt on a microcontroller) and uses no existential.
///
/// `init(_:)` wraps any `SMPCryptoPrimitives`. Its mutating members (key pair generation, random bytes) run on
/// a copy of the value each time, so a wrapped type must draw its randomness from a source outside itself
/// (the system generator, a hardware TRNG), as `SwiftCryptoSMP` does. For a generator with state, pass
/// closures that share it.
public struct SMPCrypto: SMPCryptoPrimitives, Sendable {
    public var aes128Function: @Sendable ([UInt8], [UInt8]) throws(SMPCryptoError) -> [UInt8]
    public var aesCMACFunction: @Sendable ([UInt8], [UInt8]) throws(SMPCryptoError) -> [UInt8]
    public var keyPairFunction: @Sendable () throws(SMPCryptoError) -> P256KeyPair
    public var diffieHellmanFunction: @Sendable ([UInt8], [UInt8], [UInt8]) throws(SMPCryptoError) -> [UInt8]
    public var randomFunction: @Sendable (Int) -> [UInt8]
    /// The controller computes (`SMPCrypto.controller`): the closures are the engine's, fed by HCI answers.
    public internal(set) var usesController = false

    public init(
        aes128: @escaping @Sendable ([UInt8], [UInt8]) throws(SMPCryptoError) -> [UInt8],
        aesCMAC: @escaping @Sendable ([UInt8], [UInt8]) throws(SMPCryptoError) -> [UInt8],
        generateP256KeyPair: @escaping @Sendable () throws(SMPCryptoError) -> P256KeyPair,
        diffieHellman: @escaping @Sendable ([UInt8], [UInt8], [UInt8]) throws(SMPCryptoError) -> [UInt8],
        randomBytes: @escaping @Sendable (Int) -> [UInt8]
    ) {
        aes128Function = aes128
        aesCMACFunction = aesCMAC
        keyPairFunction = generateP256KeyPair
        diffieHellmanFunction = diffieHellman
        randomFunction = randomBytes
    }

    /// Wraps a primitives value (see the type's note on mutating members).
    public init<Primitives: SMPCryptoPrimitives & Sendable>(_ primitives: Primitives) {
        self.init(
            aes128: { (key, block) throws(SMPCryptoError) in try primitives.aes128(key: key, block: block) },
            aesCMAC: { (key, message) throws(SMPCryptoError) in try primitives.aesCMAC(key: key, message: message) },
            generateP256KeyPair: { () throws(SMPCryptoError) in
                var copy = primitives
                return try copy.generateP256KeyPair()
            },
            diffieHellman: { (privateKey, x, y) throws(SMPCryptoError) in
                try primitives.diffieHellman(privateKey: privateKey, peerX: x, peerY: y)
            },
            randomBytes: { count in
                var copy = primitives
                return copy.randomBytes(count)
            })
    }

    /// The controller's crypto: LE Encrypt (AES-128, with AES-CMAC built on it), LE Rand, LE Read Local P-256
    /// Public Key and LE Generate DHKey (Core Vol 4 Part E §7.8.22, §7.8.23, §7.8.36, §7.8.37), as Zephyr's host
    /// uses them, for an image that carries no crypto library. The engine sends the commands and feeds each
    /// answer to the pairing as an input (each AES block is one round trip: an LE SC Just Works pairing takes
    /// about 30). A controller whose Supported Commands lack any of the four gets every pairing answered with
    /// Pairing Not Supported (Core Vol 3 Part H §3.5.5). Used directly (outside a pairing) its primitives fail:
    /// resolving private addresses, privacy and signed writes need a synchronous implementation.
    public static var controller: SMPCrypto {
        var crypto = SMPCrypto(
            aes128: { (_, _) throws(SMPCryptoError) in throw .primitiveFailed },
            aesCMAC: { (_, _) throws(SMPCryptoError) in throw .primitiveFailed },
            generateP256KeyPair: { () throws(SMPCryptoError) in throw .primitiveFailed },
            diffieHellman: { (_, _, _) throws(SMPCryptoError) in throw .primitiveFailed },
            randomBytes: { count in [UInt8](repeating: 0, count: count) })
        crypto.usesController = true
        return crypto
    }

    public func aes128(key: [UInt8], block: [UInt8]) throws(SMPCryptoError) -> [UInt8] { try aes128Function(key, block) }
    public func aesCMAC(key: [UInt8], message: [UInt8]) throws(SMPCryptoError) -> [UInt8] {
        try aesCMACFunction(key, message)
    }
    public mutating func generateP256KeyPair() throws(SMPCryptoError) -> P256KeyPair { try keyPairFunction() }
    public func diffieHellman(privateKey: [UInt8], peerX: [UInt8], peerY: [UInt8]) throws(SMPCryptoError) -> [UInt8] {
        try diffieHellmanFunction(privateKey, peerX, peerY)
    }
    public mutating func randomBytes(_ count: Int) -> [UInt8] { randomFunction(count) }
}

/// How the engine pairs (Core Vol 3 Part H §2.3): the pairing features it states and the crypto it
/// computes with. Without it the engine answers every pairing with Pairing Not Supported (§3.5.5).
public struct HostSecurityConfiguration: Sendable {
    /// IO capabilities, bonding, MITM, SC / SC-only, key sizes, local IRK/CSRK (see `PairingConfiguration`).
    public var pairing: PairingConfiguration
    public var crypto: SMPCrypto
    /// Advertise from resolvable private addresses made from `pairing.identityResolvingKey` (which must be
    /// set), replaced every `rotationInterval`; nil: advertise from the static random address.
    public var privacy: PrivacyConfiguration?
    /// How many bonds are kept and which are evicted for new ones (`BondStorePolicy`: 128,
    /// unauthenticated bonds first, the one used longest ago first).
    public var bondStore: BondStorePolicy

    public init(
        pairing: PairingConfiguration, crypto: SMPCrypto, privacy: PrivacyConfiguration? = nil,
        bondStore: BondStorePolicy = BondStorePolicy()
    ) {
        self.pairing = pairing
        self.crypto = crypto
        self.privacy = privacy
        self.bondStore = bondStore
    }
}

/// The LE security mode 1 levels a link can be at (Core Vol 3 Part C §10.2.1).
public enum LinkSecurityLevel: UInt8, Hashable, Sendable, Comparable {
    /// Level 1: no encryption.
    case unencrypted = 1
    /// Level 2: encrypted with an unauthenticated key (Just Works).
    case encryptedUnauthenticated = 2
    /// Level 3: encrypted with an authenticated (MITM-protected) key from legacy pairing.
    case authenticated = 3
    /// Level 4: encrypted with an authenticated LE Secure Connections key of 128 bits.
    case secureConnectionsAuthenticated = 4

    public static func < (a: LinkSecurityLevel, b: LinkSecurityLevel) -> Bool { a.rawValue < b.rawValue }

    /// The level encryption with a key of this kind gives.
    public static func of(authenticated: Bool, secureConnections: Bool, keySize: UInt8) -> LinkSecurityLevel {
        guard authenticated else { return .encryptedUnauthenticated }
        return secureConnections && keySize == 16 ? .secureConnectionsAuthenticated : .authenticated
    }
}

/// What a pairing with bonding left for a peer (Core Vol 3 Part H §3.6): enough to encrypt the next
/// connection without pairing again, from either role. Keys are least significant octet first.
public struct HostBond: Hashable, Sendable {
    /// The peer's address on the link that paired.
    public var peer: BluetoothAddress
    public var secureConnections: Bool
    public var authenticated: Bool
    public var keySize: UInt8
    /// LE SC: the LTK both sides derived (used with EDIV = 0, Rand = 0).
    public var longTermKey: [UInt8]?
    /// Keys this device distributed (legacy LTK/EDIV/Rand it answers LTK requests with, IRK, CSRK).
    public var localKeys: DistributedKeys
    /// Keys the peer distributed (legacy LTK/EDIV/Rand a central encrypts with, IRK + identity address, CSRK).
    public var peerKeys: DistributedKeys
    /// The SignCounter of this device's next Signed Write Command with its CSRK (Core Vol 3 Part C
    /// §10.4.1): one more after every signed write, never reused.
    public var localSignCounter: UInt32 = 0
    /// The highest SignCounter accepted from the peer (§10.4.2): a signed write must carry a larger one.
    public var peerSignCounter: UInt32?
    /// When the bond was last used (made, or a link encrypted with its key), as the engine's count of
    /// such uses: a later use has a larger number. Not a time: it orders bonds for `BondStorePolicy`'s
    /// eviction, the one used longest ago first, and survives a restart in the bond file. 0: not known
    /// (a file written before it was kept).
    public var lastUsed: UInt64 = 0

    public init(
        peer: BluetoothAddress, secureConnections: Bool, authenticated: Bool, keySize: UInt8, longTermKey: [UInt8]?,
        localKeys: DistributedKeys, peerKeys: DistributedKeys
    ) {
        self.peer = peer
        self.secureConnections = secureConnections
        self.authenticated = authenticated
        self.keySize = keySize
        self.longTermKey = longTermKey
        self.localKeys = localKeys
        self.peerKeys = peerKeys
    }

    /// The level a link encrypted with this bond's key is at.
    public var level: LinkSecurityLevel {
        .of(authenticated: authenticated, secureConnections: secureConnections, keySize: keySize)
    }

    /// Central: the key, EDIV and Rand to start encryption with (§2.4.4): the SC LTK with zeros, or the
    /// LTK the peripheral distributed with its EDIV and Rand.
    public var centralKey: (longTermKey: [UInt8], ediv: UInt16, rand: UInt64)? {
        if secureConnections, let key = longTermKey { return (key, 0, 0) }
        guard let key = peerKeys.longTermKey, let ediv = peerKeys.ediv, let rand = peerKeys.rand else { return nil }
        return (key, ediv, littleEndianUInt64(rand))
    }

    /// Peripheral: the key for an LE Long Term Key Request with this EDIV and Rand, if it is this bond's.
    public func peripheralKey(ediv: UInt16, rand: UInt64) -> [UInt8]? {
        if secureConnections { return ediv == 0 && rand == 0 ? longTermKey : nil }
        guard let key = localKeys.longTermKey, localKeys.ediv == ediv,
            let localRand = localKeys.rand, littleEndianUInt64(localRand) == rand
        else { return nil }
        return key
    }
}

/// Why a security request failed.
public enum HostSecurityError: Error, Hashable, Sendable {
    /// No `HostSecurityConfiguration` was set.
    case notConfigured
    /// The pairing failed (locally, by the peer, or the 30 s SMP timer, §3.4).
    case pairingFailed(PairingFailure)
    /// A pairing is already running on the link.
    case pairingInProgress
    /// No pairing on the link is waiting for this answer.
    case noPairingInProgress
    /// Encrypt asked on a link to a peer without a bond (or this role cannot start encryption).
    case notBonded
    /// The controller reported encryption failed with this status (e.g. PIN or Key Missing, 0x06).
    case encryptionFailed(HCIStatus)
}

/// Eight octets least significant first as an integer (Rand in SMP PDUs and HCI).
func littleEndianUInt64(_ bytes: [UInt8]) -> UInt64 {
    var value: UInt64 = 0
    for (i, byte) in bytes.prefix(8).enumerated() { value |= UInt64(byte) << UInt64(8 * i) }
    return value
}

/// Local privacy while advertising (Core Vol 3 Part C §10.7, Vol 6 Part B §1.3.2.2): the engine advertises
/// from a resolvable private address made from its IRK, and makes a new one every `rotationInterval`
/// (T_GAP(private_addr_int), 15 minutes recommended by Vol 3 Part C Appendix A), so that only a peer that
/// bonded and holds the IRK can tell it is the same device. Host-based: the engine computes the address
/// with `ah` and sets it (LE Set Random Address on a legacy controller, LE Set Advertising Set Random
/// Address on an extended one), stopping advertising around the change as §7.8.4 requires.
///
/// Scanning and creating connections keep the static random address on an extended controller; on a
/// legacy controller, whose one random address serves every role, they use the private address too.
public struct PrivacyConfiguration: Hashable, Sendable {
    /// How long one private address is used.
    public var rotationInterval: TimeSpan

    public init(rotationInterval: TimeSpan = .seconds(15 * 60)) {
        self.rotationInterval = rotationInterval
    }
}
