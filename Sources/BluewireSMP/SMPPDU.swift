/// Security Manager Protocol PDUs (Core Vol 3 Part H §3.3, §3.5, §3.6).
///
/// Multi-octet values (confirm, random, keys, public key coordinates, DHKey check) are kept in wire order,
/// least significant octet first, exactly as carried; the crypto functions take them most significant first
/// (see `SMPCrypto.swift`), so the state machine reverses them at that boundary.

/// The fields shared by Pairing Request and Pairing Response (§3.5.1, §3.5.2).
public struct PairingFeatures: Sendable, Hashable {
    public var ioCapability: IOCapability
    /// OOB data flag: 0x01 when the device has OOB authentication data from the remote device.
    public var oobDataPresent: Bool
    public var authRequirements: AuthRequirements
    /// Maximum encryption key size, 7...16 octets (§3.5.1).
    public var maximumEncryptionKeySize: UInt8
    public var initiatorKeyDistribution: KeyDistribution
    public var responderKeyDistribution: KeyDistribution

    public init(
        ioCapability: IOCapability, oobDataPresent: Bool = false, authRequirements: AuthRequirements,
        maximumEncryptionKeySize: UInt8 = 16, initiatorKeyDistribution: KeyDistribution,
        responderKeyDistribution: KeyDistribution
    ) {
        self.ioCapability = ioCapability
        self.oobDataPresent = oobDataPresent
        self.authRequirements = authRequirements
        self.maximumEncryptionKeySize = maximumEncryptionKeySize
        self.initiatorKeyDistribution = initiatorKeyDistribution
        self.responderKeyDistribution = responderKeyDistribution
    }
}

/// SMP command codes (§3.3 table 3.3).
public enum SMPOpcode: UInt8, Sendable, Hashable {
    case pairingRequest = 0x01
    case pairingResponse = 0x02
    case pairingConfirm = 0x03
    case pairingRandom = 0x04
    case pairingFailed = 0x05
    case encryptionInformation = 0x06
    case centralIdentification = 0x07
    case identityInformation = 0x08
    case identityAddressInformation = 0x09
    case signingInformation = 0x0A
    case securityRequest = 0x0B
    case pairingPublicKey = 0x0C
    case pairingDHKeyCheck = 0x0D
    case keypressNotification = 0x0E
}

/// Why bytes are not an SMP PDU.
public enum SMPDecodingError: Error, Sendable, Hashable {
    case empty
    /// A code the spec does not define: the receiver answers Pairing Failed "Command Not Supported" (§3.3).
    case unknownOpcode(UInt8)
    /// The PDU has the wrong length for its code (§3.3: such a PDU is discarded / fails with Invalid Parameters).
    case invalidLength(opcode: UInt8, length: Int)
    /// A field holds a value the spec reserves where the receiver must refuse it.
    case invalidValue(opcode: UInt8, field: String)
}

/// One SMP PDU.
public enum SMPPDU: Sendable, Hashable {
    case pairingRequest(PairingFeatures)
    case pairingResponse(PairingFeatures)
    /// Mconfirm/Sconfirm (legacy) or Ca/Cb (SC), 16 octets wire order (§3.5.3).
    case pairingConfirm([UInt8])
    /// Mrand/Srand or Na/Nb, 16 octets wire order (§3.5.4).
    case pairingRandom([UInt8])
    case pairingFailed(PairingFailedReason)
    /// LTK, 16 octets wire order (§3.6.2).
    case encryptionInformation(longTermKey: [UInt8])
    /// EDIV and Rand of the distributed LTK (§3.6.3); Rand 8 octets wire order.
    case centralIdentification(ediv: UInt16, rand: [UInt8])
    /// IRK, 16 octets wire order (§3.6.4).
    case identityInformation(identityResolvingKey: [UInt8])
    /// Public or static random identity address (§3.6.5).
    case identityAddressInformation(SMPAddress)
    /// CSRK, 16 octets wire order (§3.6.6).
    case signingInformation(signatureKey: [UInt8])
    /// A peripheral asks the central to start pairing or encryption (§3.6.7).
    case securityRequest(AuthRequirements)
    /// P-256 public key X and Y, 32 octets each, wire order (§3.5.6).
    case pairingPublicKey(x: [UInt8], y: [UInt8])
    /// Ea/Eb, 16 octets wire order (§3.5.7).
    case pairingDHKeyCheck([UInt8])
    case keypressNotification(KeypressNotificationType)

    public var opcode: SMPOpcode {
        switch self {
        case .pairingRequest: .pairingRequest
        case .pairingResponse: .pairingResponse
        case .pairingConfirm: .pairingConfirm
        case .pairingRandom: .pairingRandom
        case .pairingFailed: .pairingFailed
        case .encryptionInformation: .encryptionInformation
        case .centralIdentification: .centralIdentification
        case .identityInformation: .identityInformation
        case .identityAddressInformation: .identityAddressInformation
        case .signingInformation: .signingInformation
        case .securityRequest: .securityRequest
        case .pairingPublicKey: .pairingPublicKey
        case .pairingDHKeyCheck: .pairingDHKeyCheck
        case .keypressNotification: .keypressNotification
        }
    }
}
