import BluewireCore

/// What an owner of a session (the host engine) needs to know while the pairing runs: the negotiated
/// method, whether LE Secure Connections is used and the key size (Core Vol 3 Part H §2.3.4, §2.3.5.1).
/// The link's security level once encryption starts follows from them (Core Vol 3 Part C §10.2.1).
extension PairingSession {
    /// The association model chosen in phase 1 (Just Works until the feature exchange ends).
    public var negotiatedMethod: PairingMethod { method }
    /// True when both sides set the SC flag (§2.3.5.6).
    public var usesSecureConnections: Bool { secureConnections }
    /// The encryption key size agreed in phase 1 (§2.3.4).
    public var negotiatedKeySize: UInt8 { keySize }
    /// True once phase 2 produced the STK or LTK and the link waits to be encrypted with it (§2.4.4).
    public var isWaitingForEncryption: Bool { state == .waitEncryption }
    /// True while the pairing has not started (a central's session created for a Security Request).
    public var isIdle: Bool { state == .idle }
}

