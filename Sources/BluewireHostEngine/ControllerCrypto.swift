import BluewireCore
import BluewireHCI
import BluewireSMP

// Left out of builds with BLUEWIRE_NO_SECURITY; HostEngine+NoSecurity stands in.
#if !BLUEWIRE_NO_SECURITY

/// One computation the Security Manager asks of the controller (Core Vol 4 Part E): the image then carries
/// no AES or elliptic-curve code, as Zephyr's host does it. Values are most significant octet first, as
/// `SMPCryptoPrimitives` takes them; HCI carries them least significant first.
enum ControllerCryptoRequest: Hashable, Sendable {
    /// LE Encrypt (§7.8.22): AES-128 of one block. Command Complete carries the result.
    case encrypt(key: [UInt8], block: [UInt8])
    /// LE Rand (§7.8.23): 8 random octets, the `index`-th chunk an input has used.
    case random(index: Int)
    /// LE Read Local P-256 Public Key (§7.8.36): Command Status, then LE Read Local P-256 Public Key
    /// Complete with X || Y. The private key never leaves the controller.
    case localPublicKey
    /// LE Generate DHKey (§7.8.37) with the peer's X and Y: Command Status, then LE Generate DHKey Complete.
    case dhKey(x: [UInt8], y: [UInt8])

    /// The HCI command that asks for it.
    var command: HCICommand {
        var parameters: [UInt8] = []
        let opcode: HCIOpcode
        switch self {
        case .encrypt(let key, let block):
            opcode = .leEncrypt
            parameters = key.reversed() + block.reversed()
        case .random:
            opcode = .leRand
        case .localPublicKey:
            opcode = .leReadLocalP256PublicKey
        case .dhKey(let x, let y):
            opcode = .leGenerateDHKey
            parameters = x.reversed() + y.reversed()
        }
        return .raw(opcode: opcode, parameters: parameters[...])
    }

    /// Answered by an LE Meta event after Command Status, rather than by Command Complete.
    var answeredByEvent: Bool {
        switch self {
        case .localPublicKey, .dhKey: true
        case .encrypt, .random: false
        }
    }
}

/// What the controller answered; a nil result: it failed (an error status, a timeout, an invalid remote
/// public key for LE Generate DHKey).
struct ControllerCryptoAnswer: Sendable {
    var request: ControllerCryptoRequest
    var result: [UInt8]?
}

/// The controller command in flight for a link's pairing (one at a time for the whole controller: its
/// P-256 key is the controller's, and the answers come back in order).
struct ControllerCryptoCommand: Sendable {
    var id: CommandID
    var handle: UInt16
    var request: ControllerCryptoRequest
}

/// One attempt to run a pairing input with the answers known so far. `PairingSession` calls its crypto
/// synchronously; here every primitive is looked up among the controller's answers, and the first one not
/// known yet is recorded as `missing` (the primitive fails, and the engine throws this attempt away, asks
/// the controller, and runs the same input again from the same session once the answer is in: the answer
/// becomes an input of the pairing, as a PDU is). A reference, so that the session's crypto closures can
/// report back; it lives only for one attempt, so engine values stay independent.
final class ControllerCryptoAttempt: @unchecked Sendable {
    let answers: [ControllerCryptoAnswer]
    private(set) var missing: ControllerCryptoRequest?
    private var randomUsed = 0

    init(answers: [ControllerCryptoAnswer]) { self.answers = answers }

    func answer(_ request: ControllerCryptoRequest) throws(SMPCryptoError) -> [UInt8] {
        for known in answers where known.request == request {
            guard let result = known.result else {
                if case .dhKey = request { throw .invalidPublicKey }
                throw .primitiveFailed
            }
            return result
        }
        if missing == nil { missing = request }
        throw .primitiveFailed
    }

    /// Random octets from LE Rand answers, 8 per command, in the order this input asks for them.
    func randomBytes(_ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        while out.count < count {
            guard let chunk = try? answer(.random(index: randomUsed)) else {
                return [UInt8](repeating: 0, count: count)  // missing: this attempt is thrown away
            }
            randomUsed += 1
            out += chunk.prefix(count - out.count)
        }
        return out
    }

    /// The session's crypto for this attempt.
    var crypto: SMPCrypto {
        var crypto = SMPCrypto(
            aes128: { (key, block) throws(SMPCryptoError) in try self.answer(.encrypt(key: key, block: block)) },
            aesCMAC: { (key, message) throws(SMPCryptoError) in
                try aesCMAC(key: key, message: message) { (key, block) throws(SMPCryptoError) in
                    try self.answer(.encrypt(key: key, block: block))
                }
            },
            generateP256KeyPair: { () throws(SMPCryptoError) in
                let key = try self.answer(.localPublicKey)
                guard key.count == 64 else { throw .primitiveFailed }
                return P256KeyPair(privateKey: [], publicKeyX: Array(key[0..<32]), publicKeyY: Array(key[32..<64]))
            },
            diffieHellman: { (_, x, y) throws(SMPCryptoError) in try self.answer(.dhKey(x: x, y: y)) },
            randomBytes: { count in self.randomBytes(count) })
        crypto.usesController = true
        return crypto
    }
}

/// An input to a link's pairing session, kept so that it can run again once the controller answered.
enum PairingInput: Sendable {
    case start
    case securityRequest
    case pdu([UInt8])
    case passkey(UInt32)
    case numericComparison(Bool)
    case keypress(KeypressNotificationType)
    case encryption(enabled: Bool)
    case longTermKeyRequest(ediv: UInt16, rand: [UInt8])
}

extension PairingSession where Crypto == SMPCrypto {
    mutating func apply(_ input: PairingInput, now: MonotonicInstant) -> [SMPAction] {
        switch input {
        case .start: start(now: now)
        case .securityRequest: securityRequest()
        case .pdu(let bytes): receive(bytes, now: now)
        case .passkey(let value): passkeyEntered(value, now: now)
        case .numericComparison(let accepted): numericComparison(accepted: accepted, now: now)
        case .keypress(let type): keypress(type, now: now)
        case .encryption(let enabled): encryptionChanged(enabled: enabled, now: now)
        case .longTermKeyRequest(let ediv, let rand): longTermKeyRequested(ediv: ediv, rand: rand, now: now)
        }
    }
}

#endif  // !BLUEWIRE_NO_SECURITY
