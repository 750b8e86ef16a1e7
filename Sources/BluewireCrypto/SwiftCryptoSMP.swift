import BluewireSMP
import Crypto
import CryptoExtras

/// `SMPCryptoPrimitives` on swift-crypto (BoringSSL): AES block function and AES-CMAC from CryptoExtras,
/// P-256 key agreement from Crypto. No AES or elliptic-curve arithmetic is written here.
public struct SwiftCryptoSMP: SMPCryptoPrimitives, Sendable {
    public init() {}

    public func aes128(key: [UInt8], block: [UInt8]) throws(SMPCryptoError) -> [UInt8] {
        guard key.count == 16, block.count == 16 else { throw .invalidLength }
        var out = block
        do { try AES.permute(&out, key: SymmetricKey(data: key)) } catch { throw .primitiveFailed }
        return out
    }

    public func aesCMAC(key: [UInt8], message: [UInt8]) throws(SMPCryptoError) -> [UInt8] {
        guard key.count == 16 else { throw .invalidLength }
        do {
            var mac = try AES.CMAC(key: SymmetricKey(data: key))
            mac.update(data: message)
            return Array(mac.finalize())
        } catch { throw .primitiveFailed }
    }

    public mutating func generateP256KeyPair() throws(SMPCryptoError) -> P256KeyPair {
        let key = P256.KeyAgreement.PrivateKey()
        let raw = Array(key.publicKey.rawRepresentation)  // X || Y
        return P256KeyPair(
            privateKey: Array(key.rawRepresentation), publicKeyX: Array(raw[0..<32]), publicKeyY: Array(raw[32..<64]))
    }

    public func diffieHellman(privateKey: [UInt8], peerX: [UInt8], peerY: [UInt8]) throws(SMPCryptoError) -> [UInt8] {
        guard privateKey.count == 32, peerX.count == 32, peerY.count == 32 else { throw .invalidLength }
        // x963Representation validates that the point is on the curve (CVE-2018-5383).
        let peer: P256.KeyAgreement.PublicKey
        do { peer = try P256.KeyAgreement.PublicKey(x963Representation: [0x04] + peerX + peerY) } catch {
            throw .invalidPublicKey
        }
        do {
            let own = try P256.KeyAgreement.PrivateKey(rawRepresentation: privateKey)
            let shared = try own.sharedSecretFromKeyAgreement(with: peer)
            return shared.withUnsafeBytes { Array($0) }
        } catch { throw .primitiveFailed }
    }

    public mutating func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }
}
