import BluewireCore
import BluewireHCI
import BluewireHostEngine
import BluewireL2CAP
import Testing

/// Credit based channels through the engine: security refusals, reconfiguration, extra credits.
@Suite("Host engine: credit based channel edges")
struct EngineChannelEdgeTests {
    static let psm = SPSM(0x0080)
    static let link = LinkedEngines.firstHandle

    @Test("an SPSM that requires encryption refuses an open link's request, and accepts once the link is encrypted")
    func securityRefusal() throws {
        var pair = try LinkedEngines()
        pair.peripheral.perform(.registerServer(spsm: Self.psm, parameters: CreditBasedChannelParameters(), security: .encrypted))
        let refused = pair.central.perform(.openChannel(connection: Self.link, spsm: Self.psm, parameters: CreditBasedChannelParameters()))
        let refusedEnhanced = pair.central.perform(.openEnhancedChannels(
            connection: Self.link, spsm: Self.psm, count: 2, parameters: CreditBasedChannelParameters()))
        pair.pump()
        // No key yet: the peer must pair, so "insufficient authentication" (§4.23, as bumble and BlueZ answer).
        #expect(pair.central.result(refused) == .failure(.channelRefused(.refused(.insufficientAuthentication))))
        #expect(pair.central.result(refusedEnhanced)
            == .failure(.channelRefused(.refusedEnhanced(.allRefusedInsufficientAuthentication))))

        pair.peripheral.engine.setLinkSecurity(
            L2CAPLinkSecurity(isEncrypted: true, keySize: 16, hasKey: true), connection: Self.link)
        let accepted = pair.central.perform(.openChannel(connection: Self.link, spsm: Self.psm, parameters: CreditBasedChannelParameters()))
        pair.pump()
        #expect(pair.central.openedChannel(accepted) != nil)
    }

    @Test("reconfigure raises our MTU on enhanced channels; an EATT bearer's ATT_MTU follows (Part G §5.3.1)")
    func reconfigure() throws {
        var pair = try LinkedEngines()
        pair.peripheral.perform(.registerServer(
            spsm: .eatt, parameters: CreditBasedChannelParameters(mtu: 128, mps: 128), security: .none))
        let open = pair.central.perform(.openEnhancedChannels(
            connection: Self.link, spsm: .eatt, count: 2, parameters: CreditBasedChannelParameters(mtu: 64, mps: 64)))
        pair.pump()
        guard case .success(.channelsOpened(let bearers))? = pair.central.result(open) else {
            Issue.record("open: \(String(describing: pair.central.result(open)))")
            return
        }
        let cids = bearers.map(\.cid)
        let raise = pair.central.perform(.reconfigureChannels(connection: Self.link, cids: cids, mtu: 100, mps: 64))
        pair.pump()
        #expect(pair.central.result(raise) == .success(.done))
        #expect(pair.central.events.contains(.channelsReconfigured(connection: Self.link, cids: cids, mtu: 100, mps: 64, byPeer: false)))
        #expect(pair.peripheral.events.contains {
            if case .channelsReconfigured(_, _, 100, 64, true) = $0 { return true }
            return false
        })
        #expect(pair.central.engine.channel(connection: Self.link, cid: cids[0])?.mtu == 100)
        let mtu = pair.central.perform(.gattOnEATT(connection: Self.link, cid: cids[0], .exchangeMTU))
        #expect(pair.central.result(mtu) == .success(.mtu(100)))

        // The MTU may not shrink (§4.27): refused before anything is sent.
        let shrink = pair.central.perform(.reconfigureChannels(connection: Self.link, cids: cids, mtu: 80, mps: 64))
        #expect(pair.central.result(shrink) == .failure(.channel(.invalidReconfiguration)))
    }

    @Test("giveCredits grants the peer more K-frames with an LE Flow Control Credit Ind (§4.24)")
    func giveCredits() throws {
        var pair = try LinkedEngines()
        pair.peripheral.perform(.registerServer(
            spsm: Self.psm, parameters: CreditBasedChannelParameters(mtu: 100, mps: 100, initialCredits: 2), security: .none))
        let open = pair.central.perform(.openChannel(connection: Self.link, spsm: Self.psm, parameters: CreditBasedChannelParameters()))
        pair.pump()
        let channel = try #require(pair.central.openedChannel(open))
        #expect(channel.peerCredits == 2)
        let served = try #require(pair.peripheral.incomingChannels.first)
        let give = pair.peripheral.perform(.giveCredits(connection: Self.link, cid: served.cid, credits: 30))
        #expect(pair.peripheral.result(give) == .success(.done))
        pair.pump()
        #expect(pair.central.events.contains(.channelCredits(connection: Self.link, cid: channel.cid, credits: 32)))
        #expect(pair.central.engine.channel(connection: Self.link, cid: channel.cid)?.peerCredits == 32)
        let unknown = pair.peripheral.perform(.giveCredits(connection: Self.link, cid: 0x007F, credits: 1))
        #expect(pair.peripheral.result(unknown) == .failure(.channel(.unknownChannel(0x007F))))
    }
}
