import BluewireHostEngine

// Pairing and link encryption on EngineHost: typed calls over the engine's `.pair`/`.encrypt`
// requests, the link's security, and the `PairingDelegate` that answers the engine's passkey and
// comparison events. The decisions (method, keys, levels, retries) are the engine's; this only waits
// and relays.

extension EngineHost {
    /// Who answers passkey and numeric-comparison prompts from now on (nil: nobody, and a pairing that
    /// needs the user waits until the peer's SMP timeout ends it, 30 s, Core Vol 3 Part H §3.4).
    public func setPairingDelegate(_ delegate: (any PairingDelegate)?) {
        pairingDelegate = delegate
    }

    /// Pairs on `connection` (Core Vol 3 Part H §2.3) — as central with a Pairing Request, as peripheral
    /// with a Security Request (§3.6.7) — and returns the link's security level once it is encrypted
    /// and the keys are distributed. Needs `configureSecurity` first; a bonded peer's keys are kept in
    /// `bonds` (save them with `BondFile`).
    /// - Throws: the engine's reason: `.security(.pairingFailed(reason))` by name, a disconnection,
    ///   `.unknownConnection`.
    public func pair(_ connection: UInt16) async throws(HostEngineError) -> LinkSecurityLevel {
        try secured(await perform(.pair(connection: connection)), connection)
    }

    /// Central: encrypts `connection` with the bonded peer's stored key, without pairing (§2.4.4).
    /// - Throws: `.security(.notBonded)` without a bond; `.encryptionFailed(status)` when the peer lost
    ///   its keys (PIN or Key Missing), which the application answers by pairing again or not.
    public func encrypt(_ connection: UInt16) async throws(HostEngineError) -> LinkSecurityLevel {
        try secured(await perform(.encrypt(connection: connection)), connection)
    }

    /// The handles of the links up now, in order (`HostEngine.connectionHandles`).
    public var connectionHandles: [UInt16] { engine.connectionHandles }

    /// The link's security level and encryption key size (7–16 octets; 0 unencrypted), nil for an
    /// unknown connection.
    public func security(of connection: UInt16) -> (level: LinkSecurityLevel, keySize: UInt8)? {
        engine.security(connection: connection)
    }

    private func secured(_ result: Result<HostCompletion, HostEngineError>, _ connection: UInt16) throws(HostEngineError) -> LinkSecurityLevel {
        switch result {
        case .success(.secured(let level)): return level
        // The engine completes `.pair` and `.encrypt` with `.secured` only; the link's level is the answer anyway.
        case .success: return engine.security(connection: connection)?.level ?? .unencrypted
        case .failure(let error): throw error
        }
    }

    /// Hands a prompt of the engine to the delegate, on its own task so the host goes on meanwhile,
    /// and gives the engine the answer.
    func routePairingPrompt(_ event: HostEngineEvent) {
        guard let delegate = pairingDelegate else { return }
        switch event {
        case .passkeyDisplay(let connection, let passkey):
            Task { await delegate.displayPasskey(passkey, connection: connection) }
        case .passkeyRequest(let connection):
            Task {
                let passkey = await delegate.enterPasskey(connection: connection)
                _ = await self.perform(.passkeyReply(connection: connection, passkey: passkey))
            }
        case .numericComparison(let connection, let value):
            Task {
                let accepted = await delegate.confirm(value, connection: connection)
                _ = await self.perform(.confirmReply(connection: connection, accepted: accepted))
            }
        default:
            break
        }
    }
}
