import BluewireCrypto
import BluewireSMP
import Testing

/// Data signing (Core Vol 3 Part H §2.4.5) against the vectors of BlueZ's unit tests for
/// bt_crypto_sign_att (unit/test-crypto.c): the RFC 4493 key and messages, in BlueZ's byte order
/// (CSRK and message as they go on the wire), counter 0. BlueZ signs the writes of real devices, so
/// agreeing with it octet for octet is what interoperating needs.
@Suite struct DataSigningTests {
    let crypto = SwiftCryptoSMP()
    /// RFC 4493's key 2b7e1516…09cf4f3c, least significant octet first.
    static let csrk = hex("3c4fcf09 8815f7ab a6d2ae28 16157e2b")
    static let rfcMessage = hex("""
        6bc1bee2 2e409f96 e93d7e11 7393172a ae2d8a57 1e03ac9c 9eb76fac 45af8e51
        30c81c46 a35ce411 e5fbc119 1a0a52ef f69f2445 df4f9b17 ad2b417b e66c3710
        """)

    @Test("BlueZ's four vectors: empty, 16, 40 and 64 octets", arguments: [
        (0, "00000000 b3a85941 27ebc2c0"),
        (16, "00000000 273974f4 392a232a"),
        (40, "00000000 b7ca94ab 87c78218"),
        (64, "00000000 44e1e6ce 1df51368"),
    ])
    func blueZVectors(_ length: Int, _ expected: String) throws {
        let message = Array(Self.rfcMessage.prefix(length))
        #expect(try crypto.attSignature(csrk: Self.csrk, message: message, counter: 0) == hex(expected))
        #expect(crypto.verifyATTSignature(csrk: Self.csrk, message: message, signature: hex(expected)))
    }

    @Test("the counter is the signature's first four octets, little-endian, and is signed: changing it breaks the MAC")
    func counterIsSigned() throws {
        let message: [UInt8] = [0xD2, 0x03, 0x00, 0x01, 0x02]
        let first = try crypto.attSignature(csrk: Self.csrk, message: message, counter: 0x0102_0304)
        #expect(Array(first.prefix(4)) == [0x04, 0x03, 0x02, 0x01])
        var forged = first
        forged[0] = 0x05
        #expect(!crypto.verifyATTSignature(csrk: Self.csrk, message: message, signature: forged))
        var tampered = message
        tampered[4] ^= 1
        #expect(!crypto.verifyATTSignature(csrk: Self.csrk, message: tampered, signature: first))
        #expect(!crypto.verifyATTSignature(csrk: Self.csrk, message: message, signature: Array(first.prefix(11))))
    }
}
