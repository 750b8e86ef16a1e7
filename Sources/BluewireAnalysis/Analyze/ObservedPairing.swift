import BluewireCore
import BluewireSMP

/// One pairing a capture shows on a connection (Core Vol 3 Part H): from its Pairing Request to its
/// end (the keys distributed, or a Pairing Failed).
///
/// The association model is not carried in any PDU: both sides derive it from the Pairing Request
/// and Response (IO capabilities, OOB flags, MITM and SC bits) with the spec's tables (§2.3.5.1,
/// tables 2.6–2.8), so the analysis derives it the same way (`PairingMethod.select`).
public struct ObservedPairing: Sendable {
    /// Record of the Pairing Request.
    public var startedAtRecord: Int
    /// Whether the local device (the capture's host) sent the Pairing Request.
    public var localIsInitiator: Bool
    public var request: PairingFeatures
    public var response: PairingFeatures?
    /// Keys in the order their PDUs were sent (`ltk`, `ediv_rand`, `irk`, `identity_address`, `csrk`).
    public var keysFromLocal: [String] = []
    public var keysFromPeer: [String] = []
    /// The Pairing Failed that ended it, and whether the local device sent it.
    public var failure: PairingFailedReason?
    public var failureFromLocal: Bool?
    /// Set when the link was encrypted after the Pairing Response and before any failure: the key
    /// this pairing produced (the STK of legacy pairing, the LTK of LE Secure Connections) is in use.
    public var encryptedAtRecord: Int?

    public init(startedAtRecord: Int, localIsInitiator: Bool, request: PairingFeatures) {
        self.startedAtRecord = startedAtRecord
        self.localIsInitiator = localIsInitiator
        self.request = request
    }

    /// LE Secure Connections: both sides set the SC bit (§2.3.5.1).
    public var secureConnections: Bool? {
        response.map { request.authRequirements.secureConnections && $0.authRequirements.secureConnections }
    }

    /// The association model both sides chose, from the two feature PDUs.
    public var method: PairingMethod? {
        guard let response, let secureConnections else { return nil }
        return PairingMethod.select(initiator: request, responder: response, secureConnections: secureConnections)
    }

    /// The encryption key size (§2.3.4): the smaller of both maxima.
    public var keySize: UInt8? {
        response.map { min(request.maximumEncryptionKeySize, $0.maximumEncryptionKeySize) }
    }

    /// Both sides asked for bonding (§3.5.1 table 3.5).
    public var bonding: Bool? {
        response.map { request.authRequirements.bonding && $0.authRequirements.bonding }
    }

    /// Whether it succeeded (the link was encrypted with its key and no Pairing Failed came).
    public var succeeded: Bool { encryptedAtRecord != nil && failure == nil }

    /// The LE security mode 1 level its key gives (Core Vol 3 Part C §10.2.1): 2 unauthenticated,
    /// 3 authenticated, 4 authenticated LE Secure Connections with a 128-bit key; nil until it succeeded.
    public var securityLevel: Int? {
        guard succeeded, let method, let secureConnections else { return nil }
        guard method.isAuthenticated else { return 2 }
        return secureConnections && keySize == 16 ? 4 : 3
    }

    /// `just_works`, `numeric_comparison`, `passkey_entry`, `out_of_band`.
    public var methodKey: String? {
        switch method {
        case .justWorks: "just_works"
        case .numericComparison: "numeric_comparison"
        case .passkeyEntry: "passkey_entry"
        case .outOfBand: "out_of_band"
        case nil: nil
        }
    }

    /// Passkey Entry: who showed the passkey, seen from the capture's host: `local_displays`,
    /// `peer_displays` or `both_input` (table 2.8); nil for the other methods.
    public var passkeyRoles: String? {
        guard case .passkeyEntry(let roles) = method else { return nil }
        switch roles {
        case .bothInput: return "both_input"
        case .initiatorDisplays: return localIsInitiator ? "local_displays" : "peer_displays"
        case .responderDisplays: return localIsInitiator ? "peer_displays" : "local_displays"
        }
    }

    /// The method as a phrase: `LE Secure Connections Passkey Entry (local displays)`.
    public var methodText: String {
        guard let method, let secureConnections else { return "unknown (no Pairing Response)" }
        var text = secureConnections ? "LE Secure Connections " : "legacy "
        switch method {
        case .justWorks: text += "Just Works"
        case .numericComparison: text += "Numeric Comparison"
        case .outOfBand: text += "Out of Band"
        case .passkeyEntry: text += "Passkey Entry (" + (passkeyRoles ?? "").replacingUnderscores() + ")"
        }
        return text
    }

    /// Notes one SMP PDU of the pairing; `fromLocal` when the capture's host sent it.
    mutating func note(_ pdu: SMPPDU, fromLocal: Bool) {
        var key: String?
        switch pdu {
        case .pairingResponse(let features) where response == nil: response = features
        case .pairingFailed(let reason):
            failure = reason
            failureFromLocal = fromLocal
        case .encryptionInformation: key = "ltk"
        case .centralIdentification: key = "ediv_rand"
        case .identityInformation: key = "irk"
        case .identityAddressInformation: key = "identity_address"
        case .signingInformation: key = "csrk"
        default: break
        }
        if let key {
            if fromLocal { keysFromLocal.append(key) } else { keysFromPeer.append(key) }
        }
    }

    /// The text of a security level (Core Vol 3 Part C §10.2.1).
    public static func levelName(_ level: Int) -> String {
        switch level {
        case 1: "unencrypted"
        case 2: "encrypted, unauthenticated"
        case 3: "encrypted, authenticated"
        default: "encrypted, authenticated, LE Secure Connections"
        }
    }
}

extension String {
    fileprivate func replacingUnderscores() -> String {
        String(map { $0 == "_" ? " " : $0 })
    }
}

extension PairingFailedReason {
    /// The reason as Core Vol 3 Part H §3.5.5 table 3.7 names it.
    var name: String {
        SMPDescription.reasonName(rawValue) ?? "Reserved (0x" + hex(rawValue, width: 2) + ")"
    }
}
