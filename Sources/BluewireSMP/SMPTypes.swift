/// Field values of the Security Manager Protocol (Core Vol 3 Part H §3.5).

/// The IO capability a device states in Pairing Request/Response (Core Vol 3 Part H §2.3.2, §3.5.1 table 3.4).
public enum IOCapability: UInt8, Sendable, Hashable, CaseIterable {
    case displayOnly = 0x00
    case displayYesNo = 0x01
    case keyboardOnly = 0x02
    case noInputNoOutput = 0x03
    case keyboardDisplay = 0x04
}

/// The AuthReq field (Core Vol 3 Part H §3.5.1 figure 3.3): bonding flags, MITM, SC, Keypress, CT2.
/// Reserved bits are kept as received so a re-encoded PDU matches the one confirm values were computed over.
public struct AuthRequirements: Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(bonding: Bool, mitm: Bool, secureConnections: Bool, keypress: Bool = false, ct2: Bool = false) {
        rawValue = (bonding ? 0x01 : 0) | (mitm ? 0x04 : 0) | (secureConnections ? 0x08 : 0)
            | (keypress ? 0x10 : 0) | (ct2 ? 0x20 : 0)
    }
    /// Bonding_Flags = 0b01: the device wants to store the keys distributed (§3.5.1 table 3.5).
    public var bonding: Bool { rawValue & 0x03 == 0x01 }
    public var mitm: Bool { rawValue & 0x04 != 0 }
    public var secureConnections: Bool { rawValue & 0x08 != 0 }
    public var keypress: Bool { rawValue & 0x10 != 0 }
    public var ct2: Bool { rawValue & 0x20 != 0 }
}

/// Initiator/Responder Key Distribution fields (Core Vol 3 Part H §3.6.1 figure 3.11).
public struct KeyDistribution: OptionSet, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// LTK with EDIV and Rand (legacy); ignored under LE Secure Connections (§3.6.1).
    public static let encryptionKey = KeyDistribution(rawValue: 0x01)
    /// IRK and identity address.
    public static let identityKey = KeyDistribution(rawValue: 0x02)
    /// CSRK.
    public static let signingKey = KeyDistribution(rawValue: 0x04)
    /// Derive the BR/EDR link key (cross-transport); not used on an LE-only host.
    public static let linkKey = KeyDistribution(rawValue: 0x08)
}

/// The reason of a Pairing Failed PDU (Core Vol 3 Part H §3.5.5 table 3.7).
public enum PairingFailedReason: Sendable, Hashable {
    case passkeyEntryFailed
    case oobNotAvailable
    case authenticationRequirements
    case confirmValueFailed
    case pairingNotSupported
    case encryptionKeySize
    case commandNotSupported
    case unspecifiedReason
    case repeatedAttempts
    case invalidParameters
    case dhKeyCheckFailed
    case numericComparisonFailed
    case brEDRPairingInProgress
    case crossTransportKeyDerivationNotAllowed
    case keyRejected
    case busy
    /// A value the spec reserves; kept so it can be reported.
    case reserved(UInt8)

    public init(rawValue: UInt8) {
        switch rawValue {
        case 0x01: self = .passkeyEntryFailed
        case 0x02: self = .oobNotAvailable
        case 0x03: self = .authenticationRequirements
        case 0x04: self = .confirmValueFailed
        case 0x05: self = .pairingNotSupported
        case 0x06: self = .encryptionKeySize
        case 0x07: self = .commandNotSupported
        case 0x08: self = .unspecifiedReason
        case 0x09: self = .repeatedAttempts
        case 0x0A: self = .invalidParameters
        case 0x0B: self = .dhKeyCheckFailed
        case 0x0C: self = .numericComparisonFailed
        case 0x0D: self = .brEDRPairingInProgress
        case 0x0E: self = .crossTransportKeyDerivationNotAllowed
        case 0x0F: self = .keyRejected
        case 0x10: self = .busy
        default: self = .reserved(rawValue)
        }
    }

    public var rawValue: UInt8 {
        switch self {
        case .passkeyEntryFailed: 0x01
        case .oobNotAvailable: 0x02
        case .authenticationRequirements: 0x03
        case .confirmValueFailed: 0x04
        case .pairingNotSupported: 0x05
        case .encryptionKeySize: 0x06
        case .commandNotSupported: 0x07
        case .unspecifiedReason: 0x08
        case .repeatedAttempts: 0x09
        case .invalidParameters: 0x0A
        case .dhKeyCheckFailed: 0x0B
        case .numericComparisonFailed: 0x0C
        case .brEDRPairingInProgress: 0x0D
        case .crossTransportKeyDerivationNotAllowed: 0x0E
        case .keyRejected: 0x0F
        case .busy: 0x10
        case .reserved(let value): value
        }
    }
}

/// Keypress Notification types (Core Vol 3 Part H §3.5.8 table 3.8).
public enum KeypressNotificationType: UInt8, Sendable, Hashable {
    case passkeyEntryStarted = 0
    case passkeyDigitEntered = 1
    case passkeyDigitErased = 2
    case passkeyCleared = 3
    case passkeyEntryCompleted = 4
}

/// An LE address as SMP carries it: the type (0 public, 1 random) and six octets, least significant first as on the wire.
public struct SMPAddress: Sendable, Hashable {
    public var isRandom: Bool
    /// Octets least significant first (wire order).
    public var octets: [UInt8]
    public init(isRandom: Bool, octets: [UInt8]) {
        self.isRandom = isRandom
        self.octets = octets
    }
    /// The 56-bit value f5/f6 take (Core Vol 3 Part H §2.2.7): type octet then the address, most significant first.
    public var f5Form: [UInt8] { [isRandom ? 1 : 0] + octets.reversed() }
}
