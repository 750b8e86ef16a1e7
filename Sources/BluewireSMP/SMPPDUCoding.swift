/// Encoding and decoding of SMP PDUs (Core Vol 3 Part H §3.5–3.6). Every PDU has a fixed length per code;
/// anything else is refused with a typed error, never trapped on.

extension SMPPDU {
    /// The PDU's bytes: code then parameters (§3.3 figure 3.2).
    public func encoded() -> [UInt8] {
        var out: [UInt8] = [opcode.rawValue]
        switch self {
        case .pairingRequest(let f), .pairingResponse(let f):
            out += [
                f.ioCapability.rawValue, f.oobDataPresent ? 1 : 0, f.authRequirements.rawValue,
                f.maximumEncryptionKeySize, f.initiatorKeyDistribution.rawValue, f.responderKeyDistribution.rawValue,
            ]
        case .pairingConfirm(let v), .pairingRandom(let v), .pairingDHKeyCheck(let v):
            out += v
        case .pairingFailed(let reason):
            out.append(reason.rawValue)
        case .encryptionInformation(let k), .identityInformation(let k), .signingInformation(let k):
            out += k
        case .centralIdentification(let ediv, let rand):
            out += [UInt8(ediv & 0xFF), UInt8(ediv >> 8)] + rand
        case .identityAddressInformation(let a):
            out.append(a.isRandom ? 1 : 0)
            out += a.octets
        case .securityRequest(let auth):
            out.append(auth.rawValue)
        case .pairingPublicKey(let x, let y):
            out += x + y
        case .keypressNotification(let type):
            out.append(type.rawValue)
        }
        return out
    }

    /// The parameter length each code has (§3.5–3.6).
    static func parameterLength(_ opcode: SMPOpcode) -> Int {
        switch opcode {
        case .pairingRequest, .pairingResponse: 6
        case .pairingConfirm, .pairingRandom, .pairingDHKeyCheck: 16
        case .encryptionInformation, .identityInformation, .signingInformation: 16
        case .pairingFailed, .securityRequest, .keypressNotification: 1
        case .centralIdentification: 10
        case .identityAddressInformation: 7
        case .pairingPublicKey: 64
        }
    }

    /// Decodes one PDU (the whole payload of an SMP L2CAP frame, CID 0x0006).
    public init(decoding bytes: [UInt8]) throws(SMPDecodingError) {
        guard let first = bytes.first else { throw .empty }
        guard let opcode = SMPOpcode(rawValue: first) else { throw .unknownOpcode(first) }
        let p = Array(bytes.dropFirst())
        guard p.count == Self.parameterLength(opcode) else {
            throw .invalidLength(opcode: first, length: bytes.count)
        }
        switch opcode {
        case .pairingRequest, .pairingResponse:
            // §3.5.1: reserved IO capability values are invalid; the key size must be 7...16.
            guard let io = IOCapability(rawValue: p[0]) else { throw .invalidValue(opcode: first, field: "IO Capability") }
            guard p[1] <= 1 else { throw .invalidValue(opcode: first, field: "OOB data flag") }
            guard (7...16).contains(p[3]) else {
                throw .invalidValue(opcode: first, field: "Maximum Encryption Key Size")
            }
            let f = PairingFeatures(
                ioCapability: io, oobDataPresent: p[1] == 1, authRequirements: AuthRequirements(rawValue: p[2]),
                maximumEncryptionKeySize: p[3], initiatorKeyDistribution: KeyDistribution(rawValue: p[4]),
                responderKeyDistribution: KeyDistribution(rawValue: p[5])
            )
            self = opcode == .pairingRequest ? .pairingRequest(f) : .pairingResponse(f)
        case .pairingConfirm: self = .pairingConfirm(p)
        case .pairingRandom: self = .pairingRandom(p)
        case .pairingDHKeyCheck: self = .pairingDHKeyCheck(p)
        case .pairingFailed: self = .pairingFailed(PairingFailedReason(rawValue: p[0]))
        case .encryptionInformation: self = .encryptionInformation(longTermKey: p)
        case .identityInformation: self = .identityInformation(identityResolvingKey: p)
        case .signingInformation: self = .signingInformation(signatureKey: p)
        case .centralIdentification:
            self = .centralIdentification(ediv: UInt16(p[0]) | UInt16(p[1]) << 8, rand: Array(p[2...]))
        case .identityAddressInformation:
            guard p[0] <= 1 else { throw .invalidValue(opcode: first, field: "AddrType") }
            self = .identityAddressInformation(SMPAddress(isRandom: p[0] == 1, octets: Array(p[1...])))
        case .securityRequest: self = .securityRequest(AuthRequirements(rawValue: p[0]))
        case .pairingPublicKey: self = .pairingPublicKey(x: Array(p[0..<32]), y: Array(p[32..<64]))
        case .keypressNotification:
            guard let type = KeypressNotificationType(rawValue: p[0]) else {
                throw .invalidValue(opcode: first, field: "Notification Type")
            }
            self = .keypressNotification(type)
        }
    }
}
