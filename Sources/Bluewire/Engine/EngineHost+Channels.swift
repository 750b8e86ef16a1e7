import BluewireHostEngine
import BluewireL2CAP

/// Credit based channels on `EngineHost` as objects (Core Vol 3 Part A §4.22–4.24, §10.1): the
/// engine's `.openChannel`/`.registerServer` with credits returned as the application consumes
/// SDUs (`HostChannelCreditReturn.onConsumption`), its events routed to `L2CAPChannel`s.
extension EngineHost {
    /// Opens an LE Credit Based channel to `psm` on a link (LE Credit Based Connection Request,
    /// §4.22). `mtu`/`mps` are what we accept (23–65535 / 23–65533); `credits` the K-frames the
    /// peer may send before we consume SDUs (raised to one full SDU's worth), which bounds the
    /// memory the channel holds. Throws `.refused` with the peer's result (§4.23) if it said no.
    public func openChannel(
        connection: UInt16, psm: SPSM, mtu: Int = 512, mps: Int = 247, credits: Int = 16
    ) async throws(L2CAPChannelError) -> L2CAPChannel {
        let pending = EngineChannelRouter.PendingOpen(connection: connection, psm: psm)
        channelRouter.pendingOpens[pending, default: 0] += 1
        let parameters = CreditBasedChannelParameters(mtu: mtu, mps: mps, initialCredits: credits)
        let result = await perform(.openChannel(
            connection: connection, spsm: psm, parameters: parameters, creditReturn: .onConsumption))
        switch result {
        case .success(.channelOpened(let info)):
            let key = EngineChannelRouter.Key(connection: connection, cid: info.cid)
            if let channel = channelRouter.unclaimed.removeValue(forKey: key) { return channel }
            // Not routed (cannot happen while the engine reports `.channelOpened` first).
            return L2CAPChannel(host: self, info)
        case .success:
            // `.openChannel` completes with `.channelOpened` only.
            releasePendingOpen(pending)
            throw .refused(.invalidResponse)
        case .failure(let error):
            releasePendingOpen(pending)
            switch error {
            case .channelRefused(let failure): throw .refused(failure)
            case .disconnected(let status): throw .disconnected(status)
            default: throw .engine(error)
            }
        }
    }

    func releasePendingOpen(_ pending: EngineChannelRouter.PendingOpen) {
        guard let count = channelRouter.pendingOpens[pending] else { return }
        channelRouter.pendingOpens[pending] = count > 1 ? count - 1 : nil
    }

    /// Accepts LE Credit Based (and Enhanced Credit Based) channels to `psm` on every link, now
    /// and later, from links meeting `security` (§4.23: others are refused with Insufficient
    /// Authentication/Encryption/Key Size). Each accepted channel is yielded by the listener.
    /// `maximumChannels` caps the channels a link may have open to `psm` at once: an enhanced
    /// request for more gets only that many, the rest refused with "Some connections refused –
    /// insufficient resources available" (§4.26), so a peer never sends on a channel nobody reads.
    public func listen(
        psm: SPSM, mtu: Int = 512, mps: Int = 247, credits: Int = 16, security: L2CAPSecurityRequirement = .none,
        maximumChannels: Int? = nil
    ) async throws(L2CAPChannelError) -> L2CAPChannelListener {
        let listener = L2CAPChannelListener(host: self, psm: psm)
        // Before the request: a channel may open the moment the server is registered.
        let previous = channelRouter.listeners[psm]
        channelRouter.listeners[psm] = listener
        let parameters = CreditBasedChannelParameters(mtu: mtu, mps: mps, initialCredits: credits)
        let result = await perform(.registerServer(
            spsm: psm, parameters: parameters, security: security, creditReturn: .onConsumption,
            maximumChannels: maximumChannels))
        if case .failure(let error) = result {
            channelRouter.listeners[psm] = previous
            listener.finish()
            throw .engine(error)
        }
        return listener
    }

    func stopListening(_ listener: L2CAPChannelListener) async {
        guard channelRouter.listeners[listener.psm] === listener else { return }
        channelRouter.listeners[listener.psm] = nil
        listener.finish()
        _ = await perform(.unregisterServer(spsm: listener.psm))
    }

    /// An SDU of the channel was consumed: its credits go back to the peer (no completion awaited).
    func consumed(connection: UInt16, cid: UInt16) {
        guard isOpen, transportFailure == nil else { return }
        let id = HostRequestID(nextRequestID)
        nextRequestID &+= 1
        engine.perform(.consumedSDUs(connection: connection, cid: cid, count: 1), id: id, now: clock.now)
        drain()
    }
}
