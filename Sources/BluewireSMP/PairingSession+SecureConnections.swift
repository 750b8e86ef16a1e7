import BluewireCore

/// Phase 2 of LE Secure Connections (Core Vol 3 Part H §2.3.5.6): public key exchange, authentication
/// stage 1 (Just Works / Numeric Comparison with one f4 commitment, Passkey Entry with 20 rounds of one
/// bit each) and stage 2 (f5 keys, f6 DHKey checks Ea/Eb).
extension PairingSession {
    mutating func sendPublicKey(now: MonotonicInstant) -> [SMPAction] {
        guard let key = localKeyPair else { return fail(.unspecifiedReason, now: now) }
        return send(.pairingPublicKey(x: key.publicKeyX.reversed(), y: key.publicKeyY.reversed()), now: now)
    }

    /// The peer's public key. A point not on P-256 fails the pairing (CVE-2018-5383, §2.3.5.6.1); so does
    /// a peer that sends our own key back (a reflection, which would make the DHKey check meaningless).
    mutating func receivedPublicKey(x: [UInt8], y: [UInt8], now: MonotonicInstant) -> [SMPAction] {
        var actions: [SMPAction] = []
        if role == .responder, localKeyPair == nil {
            do { localKeyPair = try crypto.generateP256KeyPair() } catch { return fail(.unspecifiedReason, now: now) }
        }
        guard let key = localKeyPair else { return fail(.unspecifiedReason, now: now) }
        if x == key.publicKeyX && y == key.publicKeyY { return fail(.invalidParameters, now: now) }
        do { dhKey = try crypto.diffieHellman(privateKey: key.privateKey, peerX: x, peerY: y) } catch {
            return fail(error == .invalidPublicKey ? .dhKeyCheckFailed : .unspecifiedReason, now: now)
        }
        peerPublicKey = (x, y)
        if role == .responder { actions += sendPublicKey(now: now) }
        if method == .outOfBand { return actions + startOOBNonces(now: now) }
        state = .waitConfirm
        actions += advanceConfirmSC(now: now)
        return actions
    }

    /// LE SC OOB (§2.3.5.6.4): check the peer's commitment C = f4(PKx, PKx, r, 0) when we have its OOB
    /// data, set ra/rb (zero for data that did not go across), then the nonces go without confirms.
    mutating func startOOBNonces(now: MonotonicInstant) -> [SMPAction] {
        let peerReceivedOurs = (role == .initiator ? response : request)?.oobDataPresent ?? false
        if let (r, c) = peerOOBData, let x = peerPublicKey?.x {
            guard let computed = try? crypto.f4(x, x, r, 0) else { return fail(.unspecifiedReason, now: now) }
            guard computed == c else { return fail(.confirmValueFailed, now: now) }
            oobPeerR = r
        }
        if peerReceivedOurs {
            guard let r = localOOBRandom else { return fail(.oobNotAvailable, now: now) }
            oobLocalR = r
        }
        state = .waitRandom
        guard role == .initiator else { return [] }
        localRandom = random16()
        return send(.pairingRandom(localRandom.reversed()), now: now)
    }

    var publicKeyA: [UInt8] { (role == .initiator ? localKeyPair?.publicKeyX : peerPublicKey?.x) ?? [] }
    var publicKeyB: [UInt8] { (role == .responder ? localKeyPair?.publicKeyX : peerPublicKey?.x) ?? [] }

    /// The passkey bit of this round as f4's Z: 0x80 | r_i (§2.3.5.6.3).
    var passkeyZ: UInt8 {
        guard let passkey else { return 0 }
        return 0x80 | UInt8(passkey >> UInt32(passkeyRound) & 1)
    }

    var isPasskey: Bool { if case .passkeyEntry = method { true } else { false } }

    /// In `.waitConfirm`: commit when it is this side's turn and everything needed is known.
    mutating func advanceConfirmSC(now: MonotonicInstant) -> [SMPAction] {
        guard state == .waitConfirm, peerPublicKey != nil else { return [] }
        if !isPasskey {
            if role == .responder {
                // Cb = f4(PKbx, PKax, Nb, 0), sent right after the public keys.
                localRandom = random16()
                guard let cb = try? crypto.f4(publicKeyB, publicKeyA, localRandom, 0) else {
                    return fail(.unspecifiedReason, now: now)
                }
                state = .waitRandom
                return send(.pairingConfirm(cb.reversed()), now: now)
            }
            guard peerConfirm != nil else { return [] }
            localRandom = random16()
            state = .waitRandom
            return send(.pairingRandom(localRandom.reversed()), now: now)
        }
        guard passkey != nil else { return [] }
        if role == .initiator {
            if localRandom.isEmpty {
                localRandom = random16()
                guard let ca = try? crypto.f4(publicKeyA, publicKeyB, localRandom, passkeyZ) else {
                    return fail(.unspecifiedReason, now: now)
                }
                return send(.pairingConfirm(ca.reversed()), now: now)
            }
            guard peerConfirm != nil else { return [] }
            state = .waitRandom
            return send(.pairingRandom(localRandom.reversed()), now: now)
        }
        guard peerConfirm != nil, localRandom.isEmpty else { return [] }
        localRandom = random16()
        guard let cb = try? crypto.f4(publicKeyB, publicKeyA, localRandom, passkeyZ) else {
            return fail(.unspecifiedReason, now: now)
        }
        state = .waitRandom
        return send(.pairingConfirm(cb.reversed()), now: now)
    }

    mutating func receivedRandomSC(_ random: [UInt8], now: MonotonicInstant) -> [SMPAction] {
        var actions: [SMPAction] = []
        if method == .outOfBand {
            if role == .responder { localRandom = random16() }
        } else if role == .initiator {
            // Check the responder's commitment: Cb = f4(PKbx, PKax, Nb, z).
            guard let cb = peerConfirm, let computed = try? crypto.f4(publicKeyB, publicKeyA, random, isPasskey ? passkeyZ : 0)
            else { return fail(.unspecifiedReason, now: now) }
            guard computed == cb else { return fail(.confirmValueFailed, now: now) }
        } else if isPasskey {
            guard let ca = peerConfirm, let computed = try? crypto.f4(publicKeyA, publicKeyB, random, passkeyZ)
            else { return fail(.unspecifiedReason, now: now) }
            guard computed == ca else { return fail(.confirmValueFailed, now: now) }
        }
        if role == .responder { actions += send(.pairingRandom(localRandom.reversed()), now: now) }
        initiatorNonce = role == .initiator ? localRandom : random
        responderNonce = role == .initiator ? random : localRandom
        if isPasskey {
            passkeyRound += 1
            if passkeyRound < 20 {
                localRandom = []
                peerConfirm = nil
                state = .waitConfirm
                return actions + advanceConfirmSC(now: now)
            }
        }
        if method == .numericComparison {
            guard let g = try? crypto.g2(publicKeyA, publicKeyB, initiatorNonce, responderNonce) else {
                return fail(.unspecifiedReason, now: now)
            }
            actions.append(.confirmNumericComparison(g % 1_000_000))
            state = role == .initiator ? .waitUserConfirmation : .waitDHKeyCheck
            return actions
        }
        if role == .initiator { return actions + sendInitiatorDHKeyCheck(now: now) }
        state = .waitDHKeyCheck
        return actions
    }

    mutating func numericComparisonBecameAccepted(now: MonotonicInstant) -> [SMPAction] {
        if role == .initiator, state == .waitUserConfirmation { return sendInitiatorDHKeyCheck(now: now) }
        if role == .responder, state == .waitDHKeyCheck, peerDHKeyCheck != nil { return receivedDHKeyCheck(now: now) }
        return []
    }

    /// IOcap for f6: AuthReq || OOB data flag || IO capability (§2.2.8).
    static func ioCap(_ f: PairingFeatures?) -> [UInt8] {
        guard let f else { return [0, 0, 0] }
        return [f.authRequirements.rawValue, f.oobDataPresent ? 1 : 0, f.ioCapability.rawValue]
    }

    /// ra/rb of f6: the passkey for Passkey Entry, zero for Just Works and Numeric Comparison.
    var checkR: [UInt8] { isPasskey ? passkeyValue(passkey ?? 0) : [UInt8](repeating: 0, count: 16) }

    /// (MacKey, LTK) = f5(DHKey, Na, Nb, A, B), then Ea and Eb.
    mutating func deriveKeys() throws(SMPCryptoError) -> (ea: [UInt8], eb: [UInt8]) {
        let a = initiatorAddress.f5Form
        let b = responderAddress.f5Form
        let keys = try crypto.f5(dhKey, initiatorNonce, responderNonce, a, b)
        macKey = keys.macKey
        sessionKey = masked(keys.ltk)
        var ra = checkR
        var rb = checkR
        if method == .outOfBand {
            ra = role == .initiator ? oobLocalR : oobPeerR
            rb = role == .initiator ? oobPeerR : oobLocalR
        }
        let ea = try crypto.f6(macKey, initiatorNonce, responderNonce, rb, Self.ioCap(request), a, b)
        let eb = try crypto.f6(macKey, responderNonce, initiatorNonce, ra, Self.ioCap(response), b, a)
        return (ea, eb)
    }

    mutating func sendInitiatorDHKeyCheck(now: MonotonicInstant) -> [SMPAction] {
        guard let (ea, _) = try? deriveKeys() else { return fail(.unspecifiedReason, now: now) }
        state = .waitDHKeyCheck
        return send(.pairingDHKeyCheck(ea.reversed()), now: now)
    }

    mutating func receivedDHKeyCheck(now: MonotonicInstant) -> [SMPAction] {
        // The responder answers Ea only once its user accepted the comparison (§2.3.5.6.2).
        if role == .responder, method == .numericComparison, numericComparisonAccepted != true { return [] }
        guard let received = peerDHKeyCheck, let (ea, eb) = try? deriveKeys() else {
            return fail(.unspecifiedReason, now: now)
        }
        guard received == (role == .initiator ? eb : ea) else { return fail(.dhKeyCheckFailed, now: now) }
        state = .waitEncryption
        if role == .initiator {
            return [.startEncryption(longTermKey: sessionKey.reversed(), ediv: 0, rand: [UInt8](repeating: 0, count: 8))]
        }
        return send(.pairingDHKeyCheck(eb.reversed()), now: now)
    }
}
