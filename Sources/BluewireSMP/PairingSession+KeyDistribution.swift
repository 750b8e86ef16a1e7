import BluewireCore

/// Phase 3, transport specific key distribution (Core Vol 3 Part H §3.6.1, figure 3.12): once the link is
/// encrypted the responder sends its keys first, then the initiator, each in the order LTK (Encryption
/// Information, Central Identification), IRK (Identity Information, Identity Address Information), CSRK.
extension PairingSession {
    mutating func startKeyDistribution(now: MonotonicInstant) -> [SMPAction] {
        state = .distributingKeys
        peerKeysPending = role == .initiator ? responderKeys : initiatorKeys
        var actions: [SMPAction] = []
        if role == .responder { actions += sendLocalKeys(now: now) }
        return actions + finishIfDone(now: now)
    }

    mutating func sendLocalKeys(now: MonotonicInstant) -> [SMPAction] {
        let keys = role == .initiator ? initiatorKeys : responderKeys
        var actions: [SMPAction] = []
        if keys.contains(.encryptionKey) {
            let ltk = Array(masked(random16()).reversed())
            let divider = crypto.randomBytes(2)
            let ediv = UInt16(divider[0]) | UInt16(divider[1]) << 8
            let rand = crypto.randomBytes(8)
            localDistributed.longTermKey = ltk
            localDistributed.ediv = ediv
            localDistributed.rand = rand
            actions += send(.encryptionInformation(longTermKey: ltk), now: now)
            actions += send(.centralIdentification(ediv: ediv, rand: rand), now: now)
        }
        if keys.contains(.identityKey), let irk = configuration.identityResolvingKey,
            let address = configuration.identityAddress
        {
            localDistributed.identityResolvingKey = irk
            localDistributed.identityAddress = address
            actions += send(.identityInformation(identityResolvingKey: irk), now: now)
            actions += send(.identityAddressInformation(address), now: now)
        }
        if keys.contains(.signingKey), let csrk = configuration.signatureKey {
            localDistributed.signatureKey = csrk
            actions += send(.signingInformation(signatureKey: csrk), now: now)
        }
        return actions
    }

    mutating func receivedKey(_ pdu: SMPPDU, now: MonotonicInstant) -> [SMPAction] {
        switch pdu {
        case .encryptionInformation(let ltk)
        where peerKeysPending.contains(.encryptionKey) && peerDistributed.longTermKey == nil:
            peerDistributed.longTermKey = ltk
        case .centralIdentification(let ediv, let rand) where peerDistributed.longTermKey != nil && peerKeysPending.contains(.encryptionKey):
            peerDistributed.ediv = ediv
            peerDistributed.rand = rand
            peerKeysPending.remove(.encryptionKey)
        case .identityInformation(let irk)
        where !peerKeysPending.contains(.encryptionKey) && peerKeysPending.contains(.identityKey)
            && peerDistributed.identityResolvingKey == nil:
            peerDistributed.identityResolvingKey = irk
        case .identityAddressInformation(let address)
        where peerDistributed.identityResolvingKey != nil && peerKeysPending.contains(.identityKey):
            peerDistributed.identityAddress = address
            peerKeysPending.remove(.identityKey)
        case .signingInformation(let csrk)
        where peerKeysPending == [.signingKey]:
            peerDistributed.signatureKey = csrk
            peerKeysPending.remove(.signingKey)
        default:
            return fail(.unspecifiedReason, now: now)
        }
        return finishIfDone(now: now)
    }

    /// When the peer's keys are all in: the initiator sends its own (after the responder's), then done.
    mutating func finishIfDone(now: MonotonicInstant) -> [SMPAction] {
        guard peerKeysPending.isEmpty else { return [] }
        var actions: [SMPAction] = []
        if role == .initiator { actions += sendLocalKeys(now: now) }
        state = .paired
        deadline = nil
        let result = PairingResult(
            method: method, secureConnections: secureConnections, authenticated: method.isAuthenticated,
            keySize: keySize,
            bonded: (request?.authRequirements.bonding ?? false) && (response?.authRequirements.bonding ?? false),
            longTermKey: secureConnections ? sessionKey.reversed() : nil,
            localKeys: localDistributed, peerKeys: peerDistributed)
        return actions + [.paired(result)]
    }
}
