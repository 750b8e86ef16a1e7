import BluewireCore

/// PDU dispatch and phase 1, the pairing feature exchange (Core Vol 3 Part H §2.3.1–2.3.5.1, §3.5.1–3.5.2).
extension PairingSession {
    mutating func receive(_ pdu: SMPPDU, now: MonotonicInstant) -> [SMPAction] {
        switch pdu {
        case .pairingFailed(let reason):
            guard !isFinished, state != .idle else { return [] }
            discardKeys()
            state = .failed
            deadline = nil
            return [.failed(.remote(reason))]
        case .securityRequest(let auth):
            return role == .initiator && state == .idle ? [.securityRequested(auth)] : []
        case .keypressNotification(let type):
            // Informative only (§3.5.8): passed on during Passkey Entry when both sides set the Keypress
            // bit; otherwise ignored (§2.3.5.6.3).
            guard !isFinished, keypressNotificationsAgreed else { return [] }
            return [.keypress(type)]
        case .pairingRequest(let features):
            guard role == .responder else { return fail(.commandNotSupported, now: now) }
            guard state == .idle else { return fail(.unspecifiedReason, now: now) }
            return receivedPairingRequest(features, now: now)
        case .pairingResponse(let features):
            guard role == .initiator else { return fail(.commandNotSupported, now: now) }
            guard state == .waitPairingResponse else { return fail(.unspecifiedReason, now: now) }
            return receivedPairingResponse(features, now: now)
        case .pairingPublicKey(let x, let y):
            guard state == .waitPublicKey else { return fail(.unspecifiedReason, now: now) }
            return receivedPublicKey(x: x.reversed(), y: y.reversed(), now: now)
        case .pairingConfirm(let value):
            guard state == .waitConfirm, peerConfirm == nil else { return fail(.unspecifiedReason, now: now) }
            // The initiator commits first, except in SC Just Works / Numeric Comparison (§2.3.5.5, §2.3.5.6).
            let initiatorCommitsFirst = !secureConnections || method != .justWorks && method != .numericComparison
            if role == .initiator, initiatorCommitsFirst, localRandom.isEmpty {
                return fail(.unspecifiedReason, now: now)
            }
            peerConfirm = value.reversed()
            return secureConnections ? advanceConfirmSC(now: now) : advanceLegacy(now: now)
        case .pairingRandom(let value):
            guard state == .waitRandom else { return fail(.unspecifiedReason, now: now) }
            return secureConnections
                ? receivedRandomSC(value.reversed(), now: now) : receivedRandomLegacy(value.reversed(), now: now)
        case .pairingDHKeyCheck(let value):
            guard state == .waitDHKeyCheck, peerDHKeyCheck == nil else { return fail(.unspecifiedReason, now: now) }
            peerDHKeyCheck = value.reversed()
            return receivedDHKeyCheck(now: now)
        case .encryptionInformation, .centralIdentification, .identityInformation, .identityAddressInformation,
            .signingInformation:
            guard state == .distributingKeys else { return fail(.unspecifiedReason, now: now) }
            return receivedKey(pdu, now: now)
        }
    }

    mutating func receivedPairingRequest(_ features: PairingFeatures, now: MonotonicInstant) -> [SMPAction] {
        request = features
        var answer = localFeatures
        // The responder may only narrow what the initiator asked for (§3.6.1).
        answer.initiatorKeyDistribution = features.initiatorKeyDistribution.intersection(configuration.requestedPeerKeys)
        answer.responderKeyDistribution = features.responderKeyDistribution.intersection(configuration.offeredKeys)
        response = answer
        if let failure = negotiate(now: now) { return failure }
        var actions = send(.pairingResponse(answer), now: now)
        actions += beginAuthentication(now: now)
        return actions
    }

    mutating func receivedPairingResponse(_ features: PairingFeatures, now: MonotonicInstant) -> [SMPAction] {
        guard let request,
            features.initiatorKeyDistribution.isSubset(of: request.initiatorKeyDistribution),
            features.responderKeyDistribution.isSubset(of: request.responderKeyDistribution)
        else { return fail(.invalidParameters, now: now) }
        response = features
        if let failure = negotiate(now: now) { return failure }
        return beginAuthentication(now: now)
    }

    /// Decides SC or legacy, key size and method; returns the failure actions when the pairing cannot go on.
    mutating func negotiate(now: MonotonicInstant) -> [SMPAction]? {
        guard let request, let response else { return fail(.unspecifiedReason, now: now) }
        secureConnections = request.authRequirements.secureConnections && response.authRequirements.secureConnections
        if configuration.secureConnectionsOnly && !secureConnections {
            return fail(.authenticationRequirements, now: now)
        }
        guard let size = negotiateEncryptionKeySize(
            initiatorMaximum: request.maximumEncryptionKeySize, responderMaximum: response.maximumEncryptionKeySize,
            applicationMinimum: configuration.minimumKeySize)
        else { return fail(.encryptionKeySize, now: now) }
        keySize = size
        method = PairingMethod.select(initiator: request, responder: response, secureConnections: secureConnections)
        // Legacy OOB (§2.3.5.4) needs our TK: without it (our flag set for LE SC OOB data only), OOB Not
        // Available (§3.5.5).
        if method == .outOfBand && !secureConnections && !hasLegacyOOBKey { return fail(.oobNotAvailable, now: now) }
        if configuration.mitmRequired && !method.isAuthenticated {
            return fail(.authenticationRequirements, now: now)
        }
        // Under SC the LTK is derived, not distributed (§3.6.1); the BR/EDR link key is out of scope.
        let notDistributed: KeyDistribution = secureConnections ? [.encryptionKey, .linkKey] : [.linkKey]
        initiatorKeys = response.initiatorKeyDistribution.subtracting(notDistributed)
        responderKeys = response.responderKeyDistribution.subtracting(notDistributed)
        return nil
    }

    /// Phase 2 begins: passkey shown or asked for, then public keys (SC) or confirm values (legacy).
    mutating func beginAuthentication(now: MonotonicInstant) -> [SMPAction] {
        var actions: [SMPAction] = []
        if case .passkeyEntry = method {
            if displaysPasskey {
                let value = randomPasskey()
                passkey = value
                actions.append(.displayPasskey(value))
            } else {
                actions.append(.requestPasskey)
            }
        }
        if secureConnections {
            state = .waitPublicKey
            if role == .initiator {
                do { if localKeyPair == nil { localKeyPair = try crypto.generateP256KeyPair() } } catch {
                    return fail(.unspecifiedReason, now: now)
                }
                actions += sendPublicKey(now: now)
            }
        } else {
            state = .waitConfirm
            actions += advanceLegacy(now: now)
        }
        return actions
    }

    mutating func passkeyBecameKnown(now: MonotonicInstant) -> [SMPAction] {
        guard state == .waitConfirm else { return [] }
        return secureConnections ? advanceConfirmSC(now: now) : advanceLegacy(now: now)
    }
}
