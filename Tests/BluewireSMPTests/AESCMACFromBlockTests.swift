import BluewireCrypto
import BluewireSMP
import Testing

/// `SMPCryptoPrimitives` whose AES-CMAC is `aesCMAC(key:message:block:)` over swift-crypto's AES block: what
/// a controller-crypto or hardware-AES port computes. The Appendix D sample data must come out the same.
struct BlockCMACCrypto: SMPCryptoPrimitives {
    let aes = SwiftCryptoSMP()
    func aes128(key: [UInt8], block: [UInt8]) throws(SMPCryptoError) -> [UInt8] { try aes.aes128(key: key, block: block) }
    func aesCMAC(key: [UInt8], message: [UInt8]) throws(SMPCryptoError) -> [UInt8] {
        try BluewireSMP.aesCMAC(key: key, message: message) { (k, b) throws(SMPCryptoError) in try aes.aes128(key: k, block: b) }
    }
    mutating func generateP256KeyPair() throws(SMPCryptoError) -> P256KeyPair { throw .primitiveFailed }
    func diffieHellman(privateKey: [UInt8], peerX: [UInt8], peerY: [UInt8]) throws(SMPCryptoError) -> [UInt8] {
        throw .primitiveFailed
    }
    mutating func randomBytes(_ count: Int) -> [UInt8] { [UInt8](repeating: 0, count: count) }
}

@Suite struct AESCMACFromBlockTests {
    let crypto = BlockCMACCrypto()
    static let publicAx = hex("20b003d2 f297be2c 5e2c83a7 e9f9a5b9 eff49111 acf4fddb cc030148 0e359de6")
    static let privateB = hex("55188b3d 32f6bb9a 900afcfb eed4e72a 59cb9ac2 f19d7cfb 6b4fdd49 f47fc5fd")
    static let dhKey = hex("ec0234a3 57c8ad05 341010a6 0a397d9b 99796b13 b4f866f1 868d34f3 73bfa698")

    /// RFC 4493 §4 examples 1–4 (empty, one block, 40 octets with padding, four blocks).
    @Test func rfc4493Examples() throws {
        let k = hex("2b7e1516 28aed2a6 abf71588 09cf4f3c")
        let m = hex(
            "6bc1bee2 2e409f96 e93d7e11 7393172a ae2d8a57 1e03ac9c 9eb76fac 45af8e51"
                + "30c81c46 a35ce411 e5fbc119 1a0a52ef f69f2445 df4f9b17 ad2b417b e66c3710")
        #expect(try crypto.aesCMAC(key: k, message: []) == hex("bb1d6929 e9593728 7fa37d12 9b756746"))
        #expect(try crypto.aesCMAC(key: k, message: Array(m[0..<16])) == hex("070a16b4 6b4d4144 f79bdd9d d04a287c"))
        #expect(try crypto.aesCMAC(key: k, message: Array(m[0..<40])) == hex("dfa66747 de9ae630 30ca3261 1497c827"))
        #expect(try crypto.aesCMAC(key: k, message: m) == hex("51f0bebf 7e3b9d92 fc497417 79363cfe"))
    }

    /// Every message length from 0 to 80 octets agrees with swift-crypto's own AES-CMAC.
    @Test func agreesWithSwiftCryptoAtEveryLength() throws {
        let key = hex("000102030405060708090a0b0c0d0e0f")
        let reference = SwiftCryptoSMP()
        for length in 0...80 {
            let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(try crypto.aesCMAC(key: key, message: message) == reference.aesCMAC(key: key, message: message), "length \(length)")
        }
    }

    @Test func wrongKeyLengthRefused() {
        #expect(throws: SMPCryptoError.invalidLength) { try crypto.aesCMAC(key: [1, 2, 3], message: []) }
    }

    /// The block count the controller path pays per function (each block is one LE Encrypt round trip).
    @Test func blocksPerFunction() throws {
        func blocks(_ length: Int) throws -> Int {
            var count = 0
            _ = try BluewireSMP.aesCMAC(key: [UInt8](repeating: 0, count: 16), message: [UInt8](repeating: 0, count: length)) {
                (k, b) throws(SMPCryptoError) in
                count += 1
                return try SwiftCryptoSMP().aes128(key: k, block: b)
            }
            return count
        }
        #expect(try blocks(65) == 6)  // f4 (U || V || Z) and f6 (N1 || N2 || R || IOcap || A1 || A2)
        #expect(try blocks(80) == 6)  // g2 (U || V || Y)
        #expect(try blocks(32) == 3)  // f5's T
        #expect(try blocks(53) == 5)  // f5's MacKey and LTK, each
        #expect(try blocks(4) == 2)  // h6
    }

    /// Appendix D.2–D.6 and D.8 through the block-built CMAC.
    @Test func appendixDSampleData() throws {
        let na = hex("d5cb8454 d177733e ffffb2ec 712baeab")
        let nb = hex("a6e8e7cc 25a75f6e 216583f7 ff3dc4cf")
        let a1 = hex("00561237 37bfce")
        let a2 = hex("00a71370 2dcfc1")
        #expect(try crypto.f4(Self.publicAx, Self.privateB, na, 0) == hex("f2c916f1 07a9bd1c f1eda1be a974872d"))
        let (macKey, ltk) = try crypto.f5(Self.dhKey, na, nb, a1, a2)
        #expect(macKey == hex("2965f176 a1084a02 fd3f6a20 ce636e20"))
        #expect(ltk == hex("69867911 69d7cd23 980522b5 94750a38"))
        #expect(try crypto.f6(macKey, na, nb, hex("12a3343b b453bb54 08da42d2 0c2d0fc8"), hex("010102"), a1, a2)
            == hex("e3c47398 9cd0e8c5 d26c0b09 da958f61"))
        #expect(try crypto.g2(Self.publicAx, Self.privateB, na, nb) == 0x2f9e_d5ba)
        #expect(try crypto.h6(hex("ec0234a3 57c8ad05 341010a6 0a397d9b"), hex("6c656272")) == hex("2d9ae102 e76dc91c e8d3a9e2 80b16399"))
        #expect(try crypto.h7(hex("00000000 00000000 00000000 746D7031"), hex("ec0234a3 57c8ad05 341010a6 0a397d9b"))
            == hex("fb173597 c6a3c0ec d2998c2a 75a57011"))
    }
}
