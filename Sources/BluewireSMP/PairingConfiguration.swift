import BluewireCore

/// What the local device offers and requires when pairing (Core Vol 3 Part H §2.3).
public struct PairingConfiguration: Sendable {
    public var ioCapability: IOCapability
    /// Ask to bond (Bonding_Flags = 0b01): keys are distributed to be stored.
    public var bonding: Bool
    /// Require MITM protection: a pairing that ends up Just Works fails with Authentication Requirements.
    public var mitmRequired: Bool
    /// Offer LE Secure Connections.
    public var secureConnections: Bool
    /// Secure Connections Only mode (Core Vol 3 Part C §10.2.4): a legacy pairing fails with Authentication
    /// Requirements.
    public var secureConnectionsOnly: Bool
    /// Maximum encryption key size offered (7...16).
    public var maximumKeySize: UInt8
    /// The smallest key size the application accepts (7...16, §2.3.4).
    public var minimumKeySize: UInt8
    /// Local IRK (16 octets, wire order) and identity address, distributed when both sides agree (§3.6.4–5).
    public var identityResolvingKey: [UInt8]?
    public var identityAddress: SMPAddress?
    /// Local CSRK (16 octets, wire order) distributed when both sides agree (§3.6.6).
    public var signatureKey: [UInt8]?
    /// Keys asked of the peer.
    public var requestedPeerKeys: KeyDistribution
    /// Set the Keypress bit in AuthReq (§3.5.1): this device sends and takes Keypress Notifications
    /// (§3.5.8) during Passkey Entry. They are used only when both sides set the bit (§2.3.5.6.3).
    public var keypressNotifications: Bool
    /// LE legacy OOB (§2.3.5.4): the 16-octet TK both devices received out of band (most significant octet
    /// first). With `secureConnections` false its presence sets the OOB data flag, and legacy pairing uses
    /// OOB when both sides set it (table 2.6), with this TK for the confirm values and the STK. (Under LE SC
    /// either flag selects SC OOB, table 2.7, which needs the SC OOB data instead; so a device offering SC
    /// does not set the flag for a legacy TK.) The TK should be random (it is the pairing's only secret)
    /// and is for one peer: set it before the pairing it is for.
    public var legacyOOBTemporaryKey: [UInt8]?
    /// Passkey Entry where this device displays: show this passkey (0...999999) instead of a random one.
    /// For devices that print a fixed passkey on a label, or a test rig. §2.3.5.3 wants a random passkey
    /// per pairing: a fixed one gives an eavesdropper of one pairing the next (and legacy pairing's TK
    /// is then known), so use it only where no display can show a new one.
    public var fixedPasskey: UInt32?

    public init(
        ioCapability: IOCapability, bonding: Bool = true, mitmRequired: Bool = false, secureConnections: Bool = true,
        secureConnectionsOnly: Bool = false, maximumKeySize: UInt8 = 16, minimumKeySize: UInt8 = 7,
        identityResolvingKey: [UInt8]? = nil, identityAddress: SMPAddress? = nil, signatureKey: [UInt8]? = nil,
        requestedPeerKeys: KeyDistribution = [.encryptionKey, .identityKey, .signingKey],
        keypressNotifications: Bool = false, legacyOOBTemporaryKey: [UInt8]? = nil
    ) {
        self.legacyOOBTemporaryKey = legacyOOBTemporaryKey
        self.keypressNotifications = keypressNotifications
        self.ioCapability = ioCapability
        self.bonding = bonding
        self.mitmRequired = mitmRequired
        self.secureConnections = secureConnections
        self.secureConnectionsOnly = secureConnectionsOnly
        self.maximumKeySize = maximumKeySize
        self.minimumKeySize = minimumKeySize
        self.identityResolvingKey = identityResolvingKey
        self.identityAddress = identityAddress
        self.signatureKey = signatureKey
        self.requestedPeerKeys = requestedPeerKeys
    }

    /// The keys this device can hand out: an LTK always (legacy), IRK and CSRK when configured.
    var offeredKeys: KeyDistribution {
        var keys: KeyDistribution = bonding ? [.encryptionKey] : []
        if bonding, identityResolvingKey != nil, identityAddress != nil { keys.insert(.identityKey) }
        if bonding, signatureKey != nil { keys.insert(.signingKey) }
        return keys
    }
}

/// Keys one side distributed in phase 3 (§3.6); all values in wire order.
public struct DistributedKeys: Sendable, Hashable {
    public var longTermKey: [UInt8]?
    public var ediv: UInt16?
    public var rand: [UInt8]?
    public var identityResolvingKey: [UInt8]?
    public var identityAddress: SMPAddress?
    public var signatureKey: [UInt8]?
    public init() {}
}

/// The outcome of a successful pairing.
public struct PairingResult: Sendable, Hashable {
    public var method: PairingMethod
    public var secureConnections: Bool
    /// MITM-protected (every method but Just Works).
    public var authenticated: Bool
    public var keySize: UInt8
    public var bonded: Bool
    /// LE SC: the LTK both sides derived (f5), wire order. Nil for legacy (see the distributed keys).
    public var longTermKey: [UInt8]?
    public var localKeys: DistributedKeys
    public var peerKeys: DistributedKeys
}

/// Why a pairing ended without keys; every key of that pairing is discarded.
public enum PairingFailure: Sendable, Hashable {
    /// This side sent Pairing Failed with the reason.
    case local(PairingFailedReason)
    /// The peer sent Pairing Failed with the reason.
    case remote(PairingFailedReason)
    /// The 30 s Security Manager timer expired (§3.4): no more SMP on this link.
    case timeout
}

/// What the session asks its owner to do.
public enum SMPAction: Sendable, Hashable {
    /// Send the PDU on the SMP fixed channel (CID 0x0006).
    case send(SMPPDU)
    /// Central: HCI LE Enable Encryption with this key (wire order), EDIV and Rand (Core Vol 4 Part E §7.8.24).
    case startEncryption(longTermKey: [UInt8], ediv: UInt16, rand: [UInt8])
    /// Peripheral: HCI LE Long Term Key Request Reply (§7.8.25).
    case longTermKeyReply([UInt8])
    /// Peripheral: HCI LE Long Term Key Request Negative Reply (§7.8.26).
    case longTermKeyNegativeReply
    /// Show the six-digit passkey to the user.
    case displayPasskey(UInt32)
    /// Ask the user for the passkey the other device shows; answer with `passkeyEntered`.
    case requestPasskey
    /// Show the number and ask whether both devices show the same; answer with `numericComparison(accepted:)`.
    case confirmNumericComparison(UInt32)
    /// The peer's Keypress Notification (§3.5.8) during Passkey Entry, when both sides set the Keypress
    /// bit: what its user did on the keyboard, for a display to follow.
    case keypress(KeypressNotificationType)
    /// The peripheral asked for security (§3.6.7): the owner may start pairing or encryption.
    case securityRequested(AuthRequirements)
    case paired(PairingResult)
    case failed(PairingFailure)
}

/// The two roles of a pairing: the central initiates (§2.3).
public enum SMPRole: Sendable, Hashable {
    case initiator
    case responder
}

/// The Security Manager timer (§3.4).
public let smpTimeout = TimeSpan.seconds(30)
