import BluewireCrypto
import BluewireSMP
import Testing

/// The crypto toolbox against Core Vol 3 Part H Appendix D sample data and RFC 4493 §4 (AES-CMAC).
@Suite struct SMPCryptoVectorTests {
    let crypto = SwiftCryptoSMP()

    // Appendix D.1: P-256 sample data.
    static let privateA = hex("3f49f6d4 a3c55f38 74c9b3e3 d2103f50 4aff607b eb40b799 5899b8a6 cd3c1abd")
    static let privateB = hex("55188b3d 32f6bb9a 900afcfb eed4e72a 59cb9ac2 f19d7cfb 6b4fdd49 f47fc5fd")
    static let publicAx = hex("20b003d2 f297be2c 5e2c83a7 e9f9a5b9 eff49111 acf4fddb cc030148 0e359de6")
    static let publicAy = hex("dc809c49 652aeb6d 63329abf 5a52155c 766345c2 8fed3024 741c8ed0 1589d28b")
    static let publicBx = hex("1ea1f0f0 1faf1d96 09592284 f19e4c00 47b58afd 8615a69f 559077b2 2faaa190")
    static let publicBy = hex("4c55f33e 429dad37 7356703a 9ab85160 472d1130 e28e3676 5f89aff9 15b1214a")
    static let dhKey = hex("ec0234a3 57c8ad05 341010a6 0a397d9b 99796b13 b4f866f1 868d34f3 73bfa698")

    @Test func p256DiffieHellmanSampleData() throws {
        #expect(try crypto.diffieHellman(privateKey: Self.privateA, peerX: Self.publicBx, peerY: Self.publicBy) == Self.dhKey)
        #expect(try crypto.diffieHellman(privateKey: Self.privateB, peerX: Self.publicAx, peerY: Self.publicAy) == Self.dhKey)
    }

    /// CVE-2018-5383: a point off the curve (here B's X with a changed Y, and the all-zero point) is refused.
    @Test func publicKeyNotOnCurveRefused() {
        var y = Self.publicBy
        y[31] ^= 0x01
        #expect(throws: SMPCryptoError.invalidPublicKey) {
            try crypto.diffieHellman(privateKey: Self.privateA, peerX: Self.publicBx, peerY: y)
        }
        #expect(throws: SMPCryptoError.invalidPublicKey) {
            try crypto.diffieHellman(privateKey: Self.privateA, peerX: [UInt8](repeating: 0, count: 32), peerY: [UInt8](repeating: 0, count: 32))
        }
    }

    @Test func generatedKeyPairAgrees() throws {
        var c = SwiftCryptoSMP()
        let a = try c.generateP256KeyPair()
        let b = try c.generateP256KeyPair()
        let ab = try c.diffieHellman(privateKey: a.privateKey, peerX: b.publicKeyX, peerY: b.publicKeyY)
        let ba = try c.diffieHellman(privateKey: b.privateKey, peerX: a.publicKeyX, peerY: a.publicKeyY)
        #expect(ab == ba && ab.count == 32)
        #expect(a.publicKeyX != b.publicKeyX)
        #expect(c.randomBytes(16) != c.randomBytes(16))
    }

    /// RFC 4493 §4 examples 1–4.
    @Test func aesCMACRFC4493() throws {
        let k = hex("2b7e1516 28aed2a6 abf71588 09cf4f3c")
        let m = hex(
            "6bc1bee2 2e409f96 e93d7e11 7393172a ae2d8a57 1e03ac9c 9eb76fac 45af8e51"
                + "30c81c46 a35ce411 e5fbc119 1a0a52ef f69f2445 df4f9b17 ad2b417b e66c3710")
        #expect(try crypto.aesCMAC(key: k, message: []) == hex("bb1d6929 e9593728 7fa37d12 9b756746"))
        #expect(try crypto.aesCMAC(key: k, message: Array(m[0..<16])) == hex("070a16b4 6b4d4144 f79bdd9d d04a287c"))
        #expect(try crypto.aesCMAC(key: k, message: Array(m[0..<40])) == hex("dfa66747 de9ae630 30ca3261 1497c827"))
        #expect(try crypto.aesCMAC(key: k, message: m) == hex("51f0bebf 7e3b9d92 fc497417 79363cfe"))
    }

    /// FIPS-197 appendix C.1 for the block function e.
    @Test func eFIPS197() throws {
        let out = try crypto.e(hex("000102030405060708090a0b0c0d0e0f"), hex("00112233445566778899aabbccddeeff"))
        #expect(out == hex("69c4e0d86a7b0430d8cdb78070b4c55a"))
        #expect(throws: SMPCryptoError.invalidLength) { try crypto.e([1, 2], hex("00112233445566778899aabbccddeeff")) }
    }

    /// §2.2.3 / Appendix D: c1 sample data.
    @Test func c1SampleData() throws {
        let out = try crypto.c1(
            [UInt8](repeating: 0, count: 16), hex("5783D52156AD6F0E6388274EC6702EE0"),
            preq: hex("07071000000101"), pres: hex("05000800000302"),
            iat: 1, rat: 0, ia: hex("A1A2A3A4A5A6"), ra: hex("B1B2B3B4B5B6"))
        #expect(out == hex("1e1e3fef878988ead2a74dc5bef13b86"))
    }

    /// §2.2.4 / Appendix D: s1 sample data.
    @Test func s1SampleData() throws {
        let out = try crypto.s1(
            [UInt8](repeating: 0, count: 16), hex("000F0E0D0C0B0A091122334455667788"),
            hex("010203040506070899AABBCCDDEEFF00"))
        #expect(out == hex("9a1fe1f0e8b0f49b5b4216ae796da062"))
    }

    /// Appendix D.2: f4.
    @Test func f4SampleData() throws {
        let out = try crypto.f4(Self.publicAx, Self.privateB, hex("d5cb8454 d177733e ffffb2ec 712baeab"), 0)
        #expect(out == hex("f2c916f1 07a9bd1c f1eda1be a974872d"))
    }

    /// Appendix D.3: f5.
    @Test func f5SampleData() throws {
        let (macKey, ltk) = try crypto.f5(
            Self.dhKey, hex("d5cb8454 d177733e ffffb2ec 712baeab"), hex("a6e8e7cc 25a75f6e 216583f7 ff3dc4cf"),
            hex("00561237 37bfce"), hex("00a71370 2dcfc1"))
        #expect(macKey == hex("2965f176 a1084a02 fd3f6a20 ce636e20"))
        #expect(ltk == hex("69867911 69d7cd23 980522b5 94750a38"))
    }

    /// Appendix D.4: f6.
    @Test func f6SampleData() throws {
        let out = try crypto.f6(
            hex("2965f176 a1084a02 fd3f6a20 ce636e20"), hex("d5cb8454 d177733e ffffb2ec 712baeab"),
            hex("a6e8e7cc 25a75f6e 216583f7 ff3dc4cf"), hex("12a3343b b453bb54 08da42d2 0c2d0fc8"),
            hex("010102"), hex("00561237 37bfce"), hex("00a71370 2dcfc1"))
        #expect(out == hex("e3c47398 9cd0e8c5 d26c0b09 da958f61"))
    }

    /// Appendix D.5: g2.
    @Test func g2SampleData() throws {
        let out = try crypto.g2(
            Self.publicAx, Self.privateB, hex("d5cb8454 d177733e ffffb2ec 712baeab"),
            hex("a6e8e7cc 25a75f6e 216583f7 ff3dc4cf"))
        #expect(out == 0x2f9e_d5ba)
        #expect(out % 1_000_000 == 0x2f9e_d5ba % 1_000_000)
    }

    /// Appendix D.6: h6 with keyID "lebr".
    @Test func h6SampleData() throws {
        let out = try crypto.h6(hex("ec0234a3 57c8ad05 341010a6 0a397d9b"), hex("6c656272"))
        #expect(out == hex("2d9ae102 e76dc91c e8d3a9e2 80b16399"))
    }

    /// Appendix D.8: h7 with SALT "tmp1".
    @Test func h7SampleData() throws {
        let out = try crypto.h7(hex("00000000 00000000 00000000 746D7031"), hex("ec0234a3 57c8ad05 341010a6 0a397d9b"))
        #expect(out == hex("fb173597 c6a3c0ec d2998c2a 75a57011"))
    }

    /// Appendix D.7: ah.
    @Test func ahSampleData() throws {
        let out = try crypto.ah(hex("ec0234a3 57c8ad05 341010a6 0a397d9b"), hex("708194"))
        #expect(out == hex("0dfbaa"))
    }
}
