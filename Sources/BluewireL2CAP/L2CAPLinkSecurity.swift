/// The security of the LE link a channel would run on, as the Security Manager left it. The caller
/// supplies it; L2CAP only compares it with what a PSM requires (Core Vol 3 Part A §4.23: the
/// refusals "insufficient authentication/encryption", "encryption key size too short").
public struct L2CAPLinkSecurity: Hashable, Sendable {
    /// Whether the link is encrypted.
    public var isEncrypted: Bool
    /// Whether the key was generated with MITM protection (an authenticated pairing).
    public var isAuthenticated: Bool
    /// The encryption key size in octets (7–16), 0 when not encrypted.
    public var keySize: Int
    /// Whether a long-term key exists for the peer (it is bonded or paired), so encryption could be
    /// started without pairing.
    public var hasKey: Bool

    @inlinable
    public init(isEncrypted: Bool = false, isAuthenticated: Bool = false, keySize: Int = 0, hasKey: Bool = false) {
        self.isEncrypted = isEncrypted
        self.isAuthenticated = isAuthenticated
        self.keySize = keySize
        self.hasKey = hasKey
    }

    /// An unencrypted link with no keys: security mode 1 level 1.
    public static let open = L2CAPLinkSecurity()
}

/// What a service on a PSM requires of the link before a channel may be opened to it (Core Vol 3
/// Part C §10.2, LE security mode 1 levels 2–4, and the minimum key size of Vol 3 Part H §2.3.4).
public struct L2CAPSecurityRequirement: Hashable, Sendable {
    /// Encryption required (mode 1 level 2 or higher).
    public var encryption: Bool
    /// An authenticated (MITM-protected) key required (level 3 or higher); implies encryption.
    public var authentication: Bool
    /// The smallest acceptable key size in octets (7–16).
    public var minimumKeySize: Int

    @inlinable
    public init(encryption: Bool = false, authentication: Bool = false, minimumKeySize: Int = 7) {
        self.encryption = encryption || authentication
        self.authentication = authentication
        self.minimumKeySize = minimumKeySize
    }

    /// No security: level 1.
    public static let none = L2CAPSecurityRequirement()
    /// Unauthenticated encryption: level 2.
    public static let encrypted = L2CAPSecurityRequirement(encryption: true)
    /// Authenticated encryption with a 16-octet key: level 4's key strength.
    public static let authenticated = L2CAPSecurityRequirement(authentication: true, minimumKeySize: 16)

    /// Why `link` falls short of this requirement, nil when it meets it. An unencrypted link without
    /// a key is refused for authentication (the peer must pair); with a key, for encryption (the peer
    /// need only start encryption); then authentication, then key size, as bumble and BlueZ decide.
    public func shortfall(of link: L2CAPLinkSecurity) -> L2CAPSecurityShortfall? {
        if encryption && !link.isEncrypted {
            return link.hasKey ? .insufficientEncryption : .insufficientAuthentication
        }
        if authentication && !link.isAuthenticated { return .insufficientAuthentication }
        if encryption && link.keySize < minimumKeySize { return .encryptionKeySizeTooShort }
        return nil
    }
}

/// The three ways a link can fall short of a PSM's security requirement, each a refusal result of
/// both connection responses (§4.23 and §4.26).
public enum L2CAPSecurityShortfall: Hashable, Sendable {
    case insufficientAuthentication
    case insufficientEncryption
    case encryptionKeySizeTooShort

    /// The LE Credit Based Connection Response result.
    public var leResult: LECreditBasedConnectionResult {
        switch self {
        case .insufficientAuthentication: return .insufficientAuthentication
        case .insufficientEncryption: return .insufficientEncryption
        case .encryptionKeySizeTooShort: return .encryptionKeySizeTooShort
        }
    }

    /// The Credit Based Connection Response result.
    public var enhancedResult: CreditBasedConnectionResult {
        switch self {
        case .insufficientAuthentication: return .allRefusedInsufficientAuthentication
        case .insufficientEncryption: return .allRefusedInsufficientEncryption
        case .encryptionKeySizeTooShort: return .allRefusedEncryptionKeySizeTooShort
        }
    }
}
