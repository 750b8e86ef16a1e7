import BluewireCore
import BluewireSMP

// SMP PDU decoder and the pairing state machine, fed what a hostile peer can send on CID 0x0006.
//
// Input: byte 0 picks the local role (bit 0: responder) and the IO capability (bits 1-3) and whether
// LE SC is offered (bit 4); then length-prefixed PDUs, each also preceded by a byte of events:
// bit 0 Encryption Change, bit 1 an LTK request, bit 2 a passkey entry, bit 3 a comparison answer,
// bit 4 time jumps past the deadline.
//
// Invariants checked:
// - decoding never traps; a decoded PDU re-encodes to exactly the input bytes and its code is byte 0;
// - an error names the input's own code (unknown code or the wrong length for it);
// - the session never traps, never sends after it finished, a deadline exists only while pairing,
//   and after a timeout it sends nothing at all.

/// A stand-in for the crypto primitives: NOT cryptography. It only has to be deterministic and total so
/// the state machine can be driven anywhere; the fuzzer cannot produce valid confirm values anyway.
struct FuzzCrypto: SMPCryptoPrimitives {
    var counter: UInt8 = 0
    func aes128(key: [UInt8], block: [UInt8]) throws(SMPCryptoError) -> [UInt8] {
        guard key.count == 16, block.count == 16 else { throw .invalidLength }
        return (0..<16).map { key[$0] ^ block[$0] &+ UInt8($0) }
    }
    func aesCMAC(key: [UInt8], message: [UInt8]) throws(SMPCryptoError) -> [UInt8] {
        var out = key
        for (i, b) in message.enumerated() { out[i % 16] = out[i % 16] &* 31 &+ b }
        return out
    }
    mutating func generateP256KeyPair() throws(SMPCryptoError) -> P256KeyPair {
        counter &+= 1
        return P256KeyPair(
            privateKey: [UInt8](repeating: counter, count: 32), publicKeyX: [UInt8](repeating: 1, count: 32),
            publicKeyY: [UInt8](repeating: 2, count: 32))
    }
    func diffieHellman(privateKey: [UInt8], peerX: [UInt8], peerY: [UInt8]) throws(SMPCryptoError) -> [UInt8] {
        if peerX.first == 0xFF { throw .invalidPublicKey }
        return peerX
    }
    mutating func randomBytes(_ count: Int) -> [UInt8] {
        counter &+= 1
        return [UInt8](repeating: counter, count: count)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let setup = input.byte()
    let role: SMPRole = setup & 1 == 1 ? .responder : .initiator
    let io = IOCapability(rawValue: ((setup >> 1) & 0x07) % 5) ?? .noInputNoOutput
    let configuration = PairingConfiguration(
        ioCapability: io, mitmRequired: setup & 0x40 != 0, secureConnections: setup & 0x10 != 0,
        secureConnectionsOnly: setup & 0x20 != 0, identityResolvingKey: [UInt8](repeating: 7, count: 16),
        identityAddress: SMPAddress(isRandom: false, octets: [1, 2, 3, 4, 5, 6]),
        signatureKey: [UInt8](repeating: 8, count: 16))
    var session = PairingSession(
        role: role, configuration: configuration, crypto: FuzzCrypto(),
        initiatorAddress: SMPAddress(isRandom: false, octets: [1, 1, 1, 1, 1, 1]),
        responderAddress: SMPAddress(isRandom: true, octets: [2, 2, 2, 2, 2, 0xC2]))
    var now = MonotonicInstant.zero
    var timedOut = false
    func check(_ actions: [SMPAction], _ finishedBefore: Bool) {
        for action in actions {
            if case .send(let pdu) = action {
                require(!timedOut, "sent \(pdu) after the SMP timeout")
                if finishedBefore { require(false, "sent \(pdu) after the pairing ended") }
            }
            if case .failed(.timeout) = action { timedOut = true }
        }
        require(session.deadline == nil || !session.isFinished, "a deadline after the pairing ended")
    }
    if role == .initiator { check(session.start(now: now), false) }
    while !input.isAtEnd {
        let events = input.byte()
        let bytes = Array(input.lengthPrefixed())
        do {
            let pdu = try SMPPDU(decoding: bytes)
            require(pdu.opcode.rawValue == bytes[0], "code \(pdu.opcode) from byte \(bytes[0])")
            require(pdu.encoded() == bytes, "re-encoding differs for \(pdu)")
        } catch {
            switch error {
            case .empty: require(bytes.isEmpty, "empty error for \(bytes.count) bytes")
            case .unknownOpcode(let code), .invalidLength(let code, _), .invalidValue(let code, _):
                require(code == bytes[0], "error names code \(code), input has \(bytes[0])")
            }
        }
        var finished = session.isFinished
        check(session.receive(bytes, now: now), finished)
        finished = session.isFinished
        if events & 1 != 0 { check(session.encryptionChanged(enabled: events & 0x20 == 0, now: now), finished) }
        finished = session.isFinished
        if events & 2 != 0 { check(session.longTermKeyRequested(ediv: 0, rand: [UInt8](repeating: 0, count: 8), now: now), finished) }
        finished = session.isFinished
        if events & 4 != 0 { check(session.passkeyEntered(UInt32(events) * 3_907, now: now), finished) }
        finished = session.isFinished
        if events & 8 != 0 { check(session.numericComparison(accepted: events & 0x40 == 0, now: now), finished) }
        if events & 0x10 != 0 {
            now = now + .seconds(31)
            finished = session.isFinished
            check(session.timerFired(now: now), finished)
        }
    }
    return 0
}
