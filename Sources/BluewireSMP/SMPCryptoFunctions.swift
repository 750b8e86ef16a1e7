/// The Security Manager's cryptographic toolbox (Core Vol 3 Part H §2.2), built on `SMPCryptoPrimitives`.
/// Arguments and results are most significant octet first, as in the spec and its Appendix D.

extension SMPCryptoPrimitives {
    /// Security function e (§2.2.1): AES-128.
    public func e(_ key: [UInt8], _ plaintext: [UInt8]) throws(SMPCryptoError) -> [UInt8] {
        guard key.count == 16, plaintext.count == 16 else { throw .invalidLength }
        return try aes128(key: key, block: plaintext)
    }

    /// Random address hash ah (§2.2.2): e(k, padding || r) mod 2^24; r and the result are 3 octets.
    public func ah(_ k: [UInt8], _ r: [UInt8]) throws(SMPCryptoError) -> [UInt8] {
        guard r.count == 3 else { throw .invalidLength }
        let out = try e(k, [UInt8](repeating: 0, count: 13) + r)
        return Array(out[13...])
    }

    /// Legacy confirm value c1 (§2.2.3): e(k, e(k, r ⊕ p1) ⊕ p2) with p1 = pres || preq || rat' || iat' and
    /// p2 = padding || ia || ra. preq/pres are the 7-octet Pairing Request/Response PDUs most significant
    /// first (the wire bytes reversed); ia/ra are the 6-octet addresses most significant first.
    public func c1(
        _ k: [UInt8], _ r: [UInt8], preq: [UInt8], pres: [UInt8],
        iat: UInt8, rat: UInt8, ia: [UInt8], ra: [UInt8]
    ) throws(SMPCryptoError) -> [UInt8] {
        guard r.count == 16, preq.count == 7, pres.count == 7, ia.count == 6, ra.count == 6 else {
            throw .invalidLength
        }
        let p1 = pres + preq + [rat, iat]
        let p2 = [UInt8](repeating: 0, count: 4) + ia + ra
        let first = try e(k, xor(r, p1))
        return try e(k, xor(first, p2))
    }

    /// Legacy key generation s1 (§2.2.4): e(k, r1' || r2') with the 64 least significant bits of each.
    public func s1(_ k: [UInt8], _ r1: [UInt8], _ r2: [UInt8]) throws(SMPCryptoError) -> [UInt8] {
        guard r1.count == 16, r2.count == 16 else { throw .invalidLength }
        return try e(k, Array(r1[8...]) + Array(r2[8...]))
    }

    /// LE SC confirm value f4 (§2.2.6): AES-CMAC_X(U || V || Z).
    public func f4(_ u: [UInt8], _ v: [UInt8], _ x: [UInt8], _ z: UInt8) throws(SMPCryptoError) -> [UInt8] {
        guard u.count == 32, v.count == 32, x.count == 16 else { throw .invalidLength }
        return try aesCMAC(key: x, message: u + v + [z])
    }

    /// LE SC key generation f5 (§2.2.7): T = AES-CMAC_SALT(W), then MacKey (counter 0) and LTK (counter 1)
    /// = AES-CMAC_T(Counter || "btle" || N1 || N2 || A1 || A2 || 256). A1/A2 are 7 octets (type, address).
    public func f5(
        _ w: [UInt8], _ n1: [UInt8], _ n2: [UInt8], _ a1: [UInt8], _ a2: [UInt8]
    ) throws(SMPCryptoError) -> (macKey: [UInt8], ltk: [UInt8]) {
        guard w.count == 32, n1.count == 16, n2.count == 16, a1.count == 7, a2.count == 7 else {
            throw .invalidLength
        }
        let salt: [UInt8] = [
            0x6C, 0x88, 0x83, 0x91, 0xAA, 0xF5, 0xA5, 0x38, 0x60, 0x37, 0x0B, 0xDB, 0x5A, 0x60, 0x83, 0xBE,
        ]
        let t = try aesCMAC(key: salt, message: w)
        let body: [UInt8] = [0x62, 0x74, 0x6C, 0x65] + n1 + n2 + a1 + a2 + [0x01, 0x00]
        let macKey = try aesCMAC(key: t, message: [0x00] + body)
        let ltk = try aesCMAC(key: t, message: [0x01] + body)
        return (macKey, ltk)
    }

    /// LE SC check value f6 (§2.2.8): AES-CMAC_W(N1 || N2 || R || IOcap || A1 || A2); IOcap is
    /// AuthReq || OOB flag || IO capability.
    public func f6(
        _ w: [UInt8], _ n1: [UInt8], _ n2: [UInt8], _ r: [UInt8], _ ioCap: [UInt8], _ a1: [UInt8], _ a2: [UInt8]
    ) throws(SMPCryptoError) -> [UInt8] {
        guard w.count == 16, n1.count == 16, n2.count == 16, r.count == 16, ioCap.count == 3,
            a1.count == 7, a2.count == 7
        else { throw .invalidLength }
        return try aesCMAC(key: w, message: n1 + n2 + r + ioCap + a1 + a2)
    }

    /// LE SC numeric comparison value g2 (§2.2.9): AES-CMAC_X(U || V || Y) mod 2^32; shown as g2 mod 10^6.
    public func g2(_ u: [UInt8], _ v: [UInt8], _ x: [UInt8], _ y: [UInt8]) throws(SMPCryptoError) -> UInt32 {
        guard u.count == 32, v.count == 32, x.count == 16, y.count == 16 else { throw .invalidLength }
        let mac = try aesCMAC(key: x, message: u + v + y)
        return UInt32(mac[12]) << 24 | UInt32(mac[13]) << 16 | UInt32(mac[14]) << 8 | UInt32(mac[15])
    }

    /// Link key conversion h6 (§2.2.10): AES-CMAC_W(keyID).
    public func h6(_ w: [UInt8], _ keyID: [UInt8]) throws(SMPCryptoError) -> [UInt8] {
        guard w.count == 16, keyID.count == 4 else { throw .invalidLength }
        return try aesCMAC(key: w, message: keyID)
    }

    /// Link key conversion h7 (§2.2.11): AES-CMAC_SALT(W).
    public func h7(_ salt: [UInt8], _ w: [UInt8]) throws(SMPCryptoError) -> [UInt8] {
        guard salt.count == 16, w.count == 16 else { throw .invalidLength }
        return try aesCMAC(key: salt, message: w)
    }
}

func xor(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
    var out = a
    for i in 0..<min(a.count, b.count) { out[i] ^= b[i] }
    return out
}
