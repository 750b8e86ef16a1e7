/// The cryptographic primitives the Security Manager needs (Core Vol 3 Part H §2.2), as a protocol the core
/// calls so it carries no AES or elliptic-curve code itself: on Linux `BluewireCrypto` implements it with
/// swift-crypto; a microcontroller port can supply its own or the controller's LE Encrypt / P-256 commands.
///
/// All values are byte arrays most significant octet first, the notation of the spec's functions and of its
/// Appendix D sample data (AES-128 takes and gives its block in FIPS-197 order, which is the same).

/// Why a primitive failed.
public enum SMPCryptoError: Error, Sendable, Hashable {
    /// A key or block had the wrong length.
    case invalidLength
    /// The peer's public key is not a point on P-256 (Core Vol 3 Part H §2.3.5.6.1; the invalid-curve
    /// attack, CVE-2018-5383): the pairing must fail with DHKey Check Failed.
    case invalidPublicKey
    /// The implementation failed for a reason of its own.
    case primitiveFailed
}

/// A P-256 key pair; the private key stays opaque bytes the implementation understands.
public struct P256KeyPair: Sendable {
    public var privateKey: [UInt8]
    /// X and Y coordinates, 32 octets each, most significant first.
    public var publicKeyX: [UInt8]
    public var publicKeyY: [UInt8]
    public init(privateKey: [UInt8], publicKeyX: [UInt8], publicKeyY: [UInt8]) {
        self.privateKey = privateKey
        self.publicKeyX = publicKeyX
        self.publicKeyY = publicKeyY
    }
}

public protocol SMPCryptoPrimitives {
    /// AES-128 encryption of one 16-octet block (the security function e, §2.2.1).
    func aes128(key: [UInt8], block: [UInt8]) throws(SMPCryptoError) -> [UInt8]
    /// AES-CMAC with a 128-bit key (RFC 4493; §2.2.5).
    func aesCMAC(key: [UInt8], message: [UInt8]) throws(SMPCryptoError) -> [UInt8]
    /// A new P-256 key pair (§2.3.5.6.1).
    mutating func generateP256KeyPair() throws(SMPCryptoError) -> P256KeyPair
    /// The X coordinate of privateKey × peer's point (DHKey, 32 octets). Must refuse a point not on the
    /// curve with `.invalidPublicKey`.
    func diffieHellman(privateKey: [UInt8], peerX: [UInt8], peerY: [UInt8]) throws(SMPCryptoError) -> [UInt8]
    /// `count` octets from a cryptographically secure generator (§2.3.5.5: Mrand, Srand, Na, Nb, EDIV, Rand).
    mutating func randomBytes(_ count: Int) -> [UInt8]
}
