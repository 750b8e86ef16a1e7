/// Choosing the pairing method and the key size (Core Vol 3 Part H §2.3.4, §2.3.5.1 tables 2.6–2.8).

/// Which side shows and which side types the passkey (§2.3.5.1 table 2.8).
public enum PasskeyRoles: Sendable, Hashable {
    /// The initiator displays, the responder inputs.
    case initiatorDisplays
    /// The responder displays, the initiator inputs.
    case responderDisplays
    /// Both input the same passkey (KeyboardOnly on both sides).
    case bothInput
}

/// The association model of a pairing (§2.3.5.1).
public enum PairingMethod: Sendable, Hashable {
    case justWorks
    /// LE Secure Connections only.
    case numericComparison
    case passkeyEntry(PasskeyRoles)
    case outOfBand

    /// Just Works gives an unauthenticated key; every other method an authenticated (MITM-protected) one.
    public var isAuthenticated: Bool { self != .justWorks }

    /// Selects the method from both sides' features, exactly as tables 2.6 (legacy) and 2.7 (SC) say: OOB
    /// first (legacy: both flags; SC: either flag), then Just Works when neither asks for MITM, otherwise the
    /// IO capability table 2.8.
    public static func select(
        initiator: PairingFeatures, responder: PairingFeatures, secureConnections: Bool
    ) -> PairingMethod {
        if secureConnections {
            if initiator.oobDataPresent || responder.oobDataPresent { return .outOfBand }
        } else if initiator.oobDataPresent && responder.oobDataPresent {
            return .outOfBand
        }
        if !initiator.authRequirements.mitm && !responder.authRequirements.mitm { return .justWorks }
        return fromIOCapabilities(
            initiator: initiator.ioCapability, responder: responder.ioCapability,
            secureConnections: secureConnections
        )
    }

    /// Table 2.8: the method for an initiator and a responder IO capability.
    public static func fromIOCapabilities(
        initiator: IOCapability, responder: IOCapability, secureConnections: Bool
    ) -> PairingMethod {
        let comparison: PairingMethod = secureConnections ? .numericComparison : .justWorks
        switch (responder, initiator) {
        case (.noInputNoOutput, _), (_, .noInputNoOutput): return .justWorks
        case (.displayOnly, .displayOnly), (.displayOnly, .displayYesNo): return .justWorks
        case (.displayOnly, .keyboardOnly), (.displayOnly, .keyboardDisplay): return .passkeyEntry(.responderDisplays)
        case (.displayYesNo, .displayOnly): return .justWorks
        case (.displayYesNo, .displayYesNo): return comparison
        case (.displayYesNo, .keyboardOnly): return .passkeyEntry(.responderDisplays)
        case (.displayYesNo, .keyboardDisplay):
            return secureConnections ? .numericComparison : .passkeyEntry(.responderDisplays)
        case (.keyboardOnly, .keyboardOnly): return .passkeyEntry(.bothInput)
        case (.keyboardOnly, _): return .passkeyEntry(.initiatorDisplays)
        case (.keyboardDisplay, .keyboardOnly): return .passkeyEntry(.responderDisplays)
        case (.keyboardDisplay, .displayOnly): return .passkeyEntry(.initiatorDisplays)
        case (.keyboardDisplay, .displayYesNo), (.keyboardDisplay, .keyboardDisplay):
            return secureConnections ? .numericComparison : .passkeyEntry(.initiatorDisplays)
        }
    }
}

/// Encryption key size negotiation (§2.3.4): the smaller of both maxima, refused below 7 octets or below the
/// minimum the application requires (then the pairing fails with "Encryption Key Size").
public func negotiateEncryptionKeySize(
    initiatorMaximum: UInt8, responderMaximum: UInt8, applicationMinimum: UInt8
) -> UInt8? {
    let size = min(initiatorMaximum, responderMaximum)
    guard size >= 7, size <= 16, size >= applicationMinimum else { return nil }
    return size
}
