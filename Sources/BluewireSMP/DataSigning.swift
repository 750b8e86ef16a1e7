/// Data signing (Core Vol 3 Part H §2.4.5, Vol 3 Part C §10.4.1): the 12-octet Authentication
/// Signature of a Signed Write Command, SignCounter || MAC, where
///
///     MAC = the 64 most significant bits of AES-CMAC_CSRK(m || SignCounter)
///
/// m is the ATT PDU before the signature (opcode, handle, value) as it goes on the wire, and the
/// counter is appended as it will be sent (little-endian). The spec's functions take their operands
/// most significant octet first, so the wire octets are reversed into CMAC and the MAC is reversed
/// back; the CSRK is kept as SMP distributes it (Signing Information, §3.6.6: least significant
/// octet first). BlueZ computes the same (src/shared/crypto.c bt_crypto_sign_att; its unit tests'
/// vectors are ours, DataSigningTests).
extension SMPCryptoPrimitives {
    /// The signature of `message` (the PDU's octets before the signature) with the signing key `csrk`
    /// (16 octets, as distributed) and `counter`, in wire order: counter (4 octets, LE) then MAC (8 octets).
    public func attSignature(csrk: [UInt8], message: [UInt8], counter: UInt32) throws(SMPCryptoError) -> [UInt8] {
        guard csrk.count == 16 else { throw .invalidLength }
        let counterOctets = (0..<4).map { UInt8(truncatingIfNeeded: counter >> UInt32(8 * $0)) }
        let mac = try aesCMAC(key: csrk.reversed(), message: (message + counterOctets).reversed())
        guard mac.count == 16 else { throw .invalidLength }
        // The 64 most significant bits, least significant octet first.
        return counterOctets + mac[0..<8].reversed()
    }

    /// Whether `signature` (12 octets, as received) signs `message` with `csrk`; the counter is the
    /// signature's own first four octets (the caller checks it against the last one accepted).
    public func verifyATTSignature(csrk: [UInt8], message: [UInt8], signature: [UInt8]) -> Bool {
        guard signature.count == 12 else { return false }
        let counter = UInt32(signature[0]) | UInt32(signature[1]) << 8 | UInt32(signature[2]) << 16 | UInt32(signature[3]) << 24
        guard let expected = try? attSignature(csrk: csrk, message: message, counter: counter) else { return false }
        return expected == signature
    }
}
