import BluewireCore

/// Phase 2 of LE legacy pairing (Core Vol 3 Part H §2.3.5.5): Mconfirm/Sconfirm with c1, Mrand/Srand,
/// STK = s1(TK, Srand, Mrand).
extension PairingSession {
    /// TK: zero for Just Works, the passkey for Passkey Entry, the out-of-band TK for OOB (§2.3.5.2–4);
    /// nil while the passkey is unknown.
    var temporaryKey: [UInt8]? {
        switch method {
        case .justWorks: return [UInt8](repeating: 0, count: 16)
        case .passkeyEntry: return passkey.map(passkeyValue)
        case .outOfBand: return hasLegacyOOBKey ? configuration.legacyOOBTemporaryKey : nil
        case .numericComparison: return nil
        }
    }

    func confirmValue(_ tk: [UInt8], _ random: [UInt8]) throws(SMPCryptoError) -> [UInt8] {
        guard let request, let response else { throw .invalidLength }
        return try crypto.c1(
            tk, random, preq: SMPPDU.pairingRequest(request).encoded().reversed(),
            pres: SMPPDU.pairingResponse(response).encoded().reversed(),
            iat: initiatorAddress.isRandom ? 1 : 0, rat: responderAddress.isRandom ? 1 : 0,
            ia: initiatorAddress.octets.reversed(), ra: responderAddress.octets.reversed())
    }

    /// Sends this side's confirm once TK is known (initiator first; the responder after Mconfirm).
    mutating func advanceLegacy(now: MonotonicInstant) -> [SMPAction] {
        guard state == .waitConfirm, let tk = temporaryKey else { return [] }
        if role == .initiator {
            if localRandom.isEmpty {
                localRandom = random16()
                guard let confirm = try? confirmValue(tk, localRandom) else { return fail(.unspecifiedReason, now: now) }
                return send(.pairingConfirm(confirm.reversed()), now: now)
            }
            guard peerConfirm != nil else { return [] }
            state = .waitRandom
            return send(.pairingRandom(localRandom.reversed()), now: now)
        }
        guard peerConfirm != nil, localRandom.isEmpty else { return [] }
        localRandom = random16()
        guard let confirm = try? confirmValue(tk, localRandom) else { return fail(.unspecifiedReason, now: now) }
        state = .waitRandom
        return send(.pairingConfirm(confirm.reversed()), now: now)
    }

    mutating func receivedRandomLegacy(_ random: [UInt8], now: MonotonicInstant) -> [SMPAction] {
        guard let tk = temporaryKey, let expected = peerConfirm,
            let computed = try? confirmValue(tk, random)
        else { return fail(.unspecifiedReason, now: now) }
        guard computed == expected else { return fail(.confirmValueFailed, now: now) }
        let (srand, mrand) = role == .initiator ? (random, localRandom) : (localRandom, random)
        guard let stk = try? crypto.s1(tk, srand, mrand) else { return fail(.unspecifiedReason, now: now) }
        sessionKey = masked(stk)
        state = .waitEncryption
        if role == .initiator {
            return [.startEncryption(longTermKey: sessionKey.reversed(), ediv: 0, rand: [UInt8](repeating: 0, count: 8))]
        }
        return send(.pairingRandom(localRandom.reversed()), now: now)
    }
}
