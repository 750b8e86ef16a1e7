/// AES-CMAC (RFC 4493; Core Vol 3 Part H §2.2.5) built on an AES-128 block function, for implementations
/// whose only AES is one block at a time: a hardware AES engine, or the controller's LE Encrypt (Core Vol 4
/// Part E §7.8.22). This is the CMAC mode around the cipher, not a cipher: the block function does every
/// encryption. It costs one block for the subkeys (L = AES-K(0^128)) and one per 16 octets of message, at
/// least one: f4 and f6 take 6 blocks, f5 13 (its T and the two counters), g2 6, h6 and h7 2.
///
/// - Parameters:
///   - key: K, 16 octets most significant first.
///   - message: M, any length.
///   - block: AES-128 of one 16-octet block with a 16-octet key, both most significant first.
/// - Returns: the 16-octet tag T (the untruncated MAC).
public func aesCMAC(
    key: [UInt8], message: [UInt8], block: ([UInt8], [UInt8]) throws(SMPCryptoError) -> [UInt8]
) throws(SMPCryptoError) -> [UInt8] {
    guard key.count == 16 else { throw .invalidLength }
    // Subkeys K1 and K2 (RFC 4493 §2.3): L doubled in GF(2^128), once and twice.
    let l = try block(key, [UInt8](repeating: 0, count: 16))
    guard l.count == 16 else { throw .primitiveFailed }
    let k1 = cmacDouble(l)
    let k2 = cmacDouble(k1)
    // §2.4: n blocks, the last one complete (xor K1) or padded with 10* (xor K2).
    let blockCount = max(1, (message.count + 15) / 16)
    let lastComplete = !message.isEmpty && message.count % 16 == 0
    var x = [UInt8](repeating: 0, count: 16)
    for index in 0..<blockCount {
        let start = index * 16
        var y = x
        if index < blockCount - 1 {
            for i in 0..<16 { y[i] ^= message[start + i] }
        } else {
            for i in 0..<16 {
                let octet: UInt8
                if start + i < message.count {
                    octet = message[start + i]
                } else {
                    octet = start + i == message.count ? 0x80 : 0x00
                }
                y[i] ^= octet ^ (lastComplete ? k1[i] : k2[i])
            }
        }
        x = try block(key, y)
        guard x.count == 16 else { throw .primitiveFailed }
    }
    return x
}

/// Multiplication by x in GF(2^128) with the CMAC polynomial: shift left one bit, and xor the constant
/// R_128 = 0x87 into the last octet when the bit shifted out was set (RFC 4493 §2.3).
private func cmacDouble(_ value: [UInt8]) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: 16)
    for i in 0..<16 {
        out[i] = value[i] << 1 | (i < 15 ? value[i + 1] >> 7 : 0)
    }
    if value[0] & 0x80 != 0 { out[15] ^= 0x87 }
    return out
}
