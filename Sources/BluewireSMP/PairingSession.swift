import BluewireCore

/// One pairing on one LE link, as an explicit state machine (Core Vol 3 Part H §2.3, §3.4, appendix C
/// message sequence charts). It is fed PDUs, link events, user input and the time, and returns the PDUs to
/// send, the HCI actions and what to tell the user; `deadline` says when to call `timerFired(now:)`.
///
/// Phase 1 (feature exchange), phase 2 (LE SC: public keys, authentication stage 1 by method, DHKey check;
/// legacy: TK, confirm/random, STK) and phase 3 (key distribution, responder first) for both roles.
/// Keys of a failed pairing are discarded: the result is only built at the end.
public struct PairingSession<Crypto: SMPCryptoPrimitives> {
    public let role: SMPRole
    public let configuration: PairingConfiguration
    package var crypto: Crypto
    /// Connection addresses of the initiator (central) and the responder (peripheral).
    let initiatorAddress: SMPAddress
    let responderAddress: SMPAddress

    enum State: Equatable {
        case idle
        case waitPairingResponse
        case waitPublicKey
        /// Authentication stage 1 / legacy confirm exchange.
        case waitConfirm
        case waitRandom
        /// SC: waiting for the user's Numeric Comparison answer (initiator) before sending Ea.
        case waitUserConfirmation
        case waitDHKeyCheck
        /// Initiator: encryption started; responder: waiting for the LTK request.
        case waitEncryption
        case distributingKeys
        case paired
        case failed
        /// The SMP timer expired: nothing more on this link (§3.4).
        case timedOut
    }

    var state: State = .idle
    public internal(set) var deadline: MonotonicInstant?

    // Phase 1
    var request: PairingFeatures?
    var response: PairingFeatures?
    var method: PairingMethod = .justWorks
    var secureConnections = false
    var keySize: UInt8 = 16
    var initiatorKeys: KeyDistribution = []
    var responderKeys: KeyDistribution = []

    // Phase 2 (all most significant octet first)
    var passkey: UInt32?
    var numericComparisonAccepted: Bool?
    var localRandom: [UInt8] = []
    var peerConfirm: [UInt8]?
    var peerRandom: [UInt8] = []
    var localKeyPair: P256KeyPair?
    var peerPublicKey: (x: [UInt8], y: [UInt8])?
    var dhKey: [UInt8] = []
    var passkeyRound = 0
    var initiatorNonce: [UInt8] = []
    var responderNonce: [UInt8] = []
    var peerDHKeyCheck: [UInt8]?
    var macKey: [UInt8] = []
    /// SC LTK or legacy STK, most significant first, masked to the key size.
    var sessionKey: [UInt8] = []

    // LE SC OOB (§2.3.5.6.4): our r and the peer's (r, C) received out of band; ra/rb as used by f6.
    var localOOBRandom: [UInt8]?
    /// The peer's OOB data (r, C = f4(PKx, PKx, r, 0)), most significant first; set it before pairing. Its
    /// presence is what the OOB data flag of our Pairing Request/Response says.
    public var peerOOBData: (random: [UInt8], confirm: [UInt8])?
    var oobLocalR = [UInt8](repeating: 0, count: 16)
    var oobPeerR = [UInt8](repeating: 0, count: 16)

    // Phase 3
    var localDistributed = DistributedKeys()
    var peerDistributed = DistributedKeys()
    var peerKeysPending: KeyDistribution = []

    public init(
        role: SMPRole, configuration: PairingConfiguration, crypto: Crypto,
        initiatorAddress: SMPAddress, responderAddress: SMPAddress
    ) {
        self.role = role
        self.configuration = configuration
        self.crypto = crypto
        self.initiatorAddress = initiatorAddress
        self.responderAddress = responderAddress
    }

    /// The features this device states in its Pairing Request or Response.
    var localFeatures: PairingFeatures {
        PairingFeatures(
            ioCapability: configuration.ioCapability, oobDataPresent: peerOOBData != nil || hasLegacyOOBKey && !configuration.secureConnections,
            authRequirements: AuthRequirements(
                bonding: configuration.bonding, mitm: configuration.mitmRequired,
                secureConnections: configuration.secureConnections,
                keypress: configuration.keypressNotifications),
            maximumEncryptionKeySize: configuration.maximumKeySize,
            initiatorKeyDistribution: role == .initiator ? configuration.offeredKeys : configuration.requestedPeerKeys,
            responderKeyDistribution: role == .initiator ? configuration.requestedPeerKeys : configuration.offeredKeys
        )
    }

    /// A usable legacy OOB TK is configured (16 octets).
    var hasLegacyOOBKey: Bool { configuration.legacyOOBTemporaryKey?.count == 16 }

    /// LE SC OOB data to hand to the peer out of band (§2.3.5.6.4): a random r and C = f4(PKx, PKx, r, 0)
    /// over the key pair this session will pair with, both most significant first.
    public mutating func localOOBData() throws(SMPCryptoError) -> (random: [UInt8], confirm: [UInt8]) {
        if localKeyPair == nil { localKeyPair = try crypto.generateP256KeyPair() }
        guard let key = localKeyPair else { throw .primitiveFailed }
        let r = localOOBRandom ?? random16()
        localOOBRandom = r
        return (r, try crypto.f4(key.publicKeyX, key.publicKeyX, r, 0))
    }

    /// Whether the pairing has ended (paired, failed or timed out).
    public var isFinished: Bool { state == .paired || state == .failed || state == .timedOut }

    // MARK: inputs

    /// Initiator: send the Pairing Request (§3.5.1) and start the SMP timer.
    public mutating func start(now: MonotonicInstant) -> [SMPAction] {
        guard role == .initiator, state == .idle else { return [] }
        let features = localFeatures
        request = features
        state = .waitPairingResponse
        return send(.pairingRequest(features), now: now)
    }

    /// Responder: ask the central to pair (§3.6.7). Does not start the SMP timer.
    public func securityRequest() -> [SMPAction] {
        guard role == .responder, state == .idle else { return [] }
        return [.send(.securityRequest(localFeatures.authRequirements))]
    }

    /// An SMP PDU from the peer (the payload of a frame on CID 0x0006).
    public mutating func receive(_ bytes: [UInt8], now: MonotonicInstant) -> [SMPAction] {
        guard state != .timedOut else { return [] }
        let pdu: SMPPDU
        do { pdu = try SMPPDU(decoding: bytes) } catch {
            switch error {
            case .unknownOpcode: return fail(.commandNotSupported, now: now)
            default: return fail(.invalidParameters, now: now)
            }
        }
        return receive(pdu, now: now)
    }

    /// The user typed the passkey (Passkey Entry, §2.3.5.3).
    public mutating func passkeyEntered(_ value: UInt32, now: MonotonicInstant) -> [SMPAction] {
        guard !isFinished, passkey == nil, value < 1_000_000 else {
            return value < 1_000_000 || isFinished ? [] : fail(.passkeyEntryFailed, now: now)
        }
        passkey = value
        return passkeyBecameKnown(now: now)
    }

    /// Keypress Notifications are in use: both sides set the Keypress bit (§3.5.1) and the method is
    /// Passkey Entry (§2.3.5.6.3).
    public var keypressNotificationsAgreed: Bool {
        guard let request, let response, case .passkeyEntry = method else { return false }
        return request.authRequirements.keypress && response.authRequirements.keypress
    }

    /// The local user pressed a key while entering the passkey: a Keypress Notification for the peer
    /// (§3.5.8). Only the side that enters the passkey sends them, only while it has not given it yet, and
    /// only when both sides set the Keypress bit; otherwise nothing is sent (the result is empty).
    public mutating func keypress(_ type: KeypressNotificationType, now: MonotonicInstant) -> [SMPAction] {
        guard !isFinished, keypressNotificationsAgreed, !displaysPasskey, passkey == nil else { return [] }
        return send(.keypressNotification(type), now: now)
    }

    /// The user's Numeric Comparison answer (§2.3.5.6.2).
    public mutating func numericComparison(accepted: Bool, now: MonotonicInstant) -> [SMPAction] {
        guard !isFinished, numericComparisonAccepted == nil else { return [] }
        guard accepted else { return fail(.numericComparisonFailed, now: now) }
        numericComparisonAccepted = true
        return numericComparisonBecameAccepted(now: now)
    }

    /// HCI Encryption Change (or Key Refresh Complete) on this link.
    public mutating func encryptionChanged(enabled: Bool, now: MonotonicInstant) -> [SMPAction] {
        guard state == .waitEncryption else { return [] }
        guard enabled else { return fail(.unspecifiedReason, now: now) }
        return startKeyDistribution(now: now)
    }

    /// Responder: HCI LE Long Term Key Request. During pairing EDIV and Rand are zero and the answer is the
    /// STK or the SC LTK (§2.4.4); anything else is for the owner's bond store.
    public mutating func longTermKeyRequested(ediv: UInt16, rand: [UInt8], now: MonotonicInstant) -> [SMPAction] {
        guard role == .responder, state == .waitEncryption, ediv == 0, rand.allSatisfy({ $0 == 0 }) else {
            return [.longTermKeyNegativeReply]
        }
        return [.longTermKeyReply(sessionKey.reversed())]
    }

    /// Time passed: at the deadline the pairing fails with a timeout and SMP stops on this link (§3.4).
    public mutating func timerFired(now: MonotonicInstant) -> [SMPAction] {
        guard let deadline, now >= deadline, !isFinished else { return [] }
        discardKeys()
        state = .timedOut
        self.deadline = nil
        return [.failed(.timeout)]
    }

    // MARK: helpers

    /// Queue a PDU: the SMP timer restarts whenever a command is queued (§3.4).
    mutating func send(_ pdu: SMPPDU, now: MonotonicInstant) -> [SMPAction] {
        deadline = now + smpTimeout
        return [.send(pdu)]
    }

    /// Not inlined: inlined with a constant reason, every call site became its own statically initialized
    /// array, which Embedded Swift places in RAM (.data), about 150 bytes each.
    @inline(never)
    mutating func fail(_ reason: PairingFailedReason, now: MonotonicInstant) -> [SMPAction] {
        guard !isFinished else { return [] }
        discardKeys()
        state = .failed
        deadline = nil
        return [.send(.pairingFailed(reason)), .failed(.local(reason))]
    }

    mutating func discardKeys() {
        sessionKey = []
        macKey = []
        dhKey = []
        localKeyPair = nil
        passkey = nil
        localDistributed = DistributedKeys()
        peerDistributed = DistributedKeys()
    }

    mutating func random16() -> [UInt8] { crypto.randomBytes(16) }

    /// A random passkey 000000...999999.
    mutating func randomPasskey() -> UInt32 {
        if let fixed = configuration.fixedPasskey, fixed <= 999_999 { return fixed }
        let b = crypto.randomBytes(4)
        return (UInt32(b[0]) << 24 | UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3])) % 1_000_000
    }

    /// Key masked to the negotiated size: the most significant octets zeroed (§2.3.4).
    func masked(_ key: [UInt8]) -> [UInt8] {
        var out = key
        for i in 0..<(16 - Int(keySize)) where i < out.count { out[i] = 0 }
        return out
    }

    /// Does this side display the passkey?
    var displaysPasskey: Bool {
        guard case .passkeyEntry(let roles) = method else { return false }
        switch roles {
        case .initiatorDisplays: return role == .initiator
        case .responderDisplays: return role == .responder
        case .bothInput: return false
        }
    }
}

/// A 128-bit value of a passkey, most significant first (TK, and ra/rb of f6).
func passkeyValue(_ passkey: UInt32) -> [UInt8] {
    [UInt8](repeating: 0, count: 12)
        + [UInt8(passkey >> 24 & 0xFF), UInt8(passkey >> 16 & 0xFF), UInt8(passkey >> 8 & 0xFF), UInt8(passkey & 0xFF)]
}

/// A session is sendable when its crypto is: everything else it holds is plain values.
extension PairingSession: Sendable where Crypto: Sendable {}
