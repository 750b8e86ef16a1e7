import BluewireCore
import Testing

@testable import BluewireL2CAP

/// Fuzz/Regressions/l2cap-signaling/invalid-response-duplicate-remote-cid.bin, as a scenario: the peer
/// opened a channel from its CID 0x0040, then answered our own request with the same CID. The
/// invalid channel was kept (with MPS 0) while being disconnected, and K-frames meant for the real
/// channel were checked against it.
@Suite struct FuzzRegressionCreditBasedTests {
    @Test func aResponseReusingAnOpenChannelsRemoteCIDLeavesThatChannelAlone() throws {
        var manager = CreditBasedChannelManager(role: .central)
        try manager.register(psm: SPSM(0x0080), service: .init(parameters: .init(mtu: 100, mps: 30, initialCredits: 8)))
        let open = LESignalingCommand(identifier: 1, body: .leCreditBasedConnectionRequest(
            spsm: 0x80, sourceCID: 0x0040, mtu: 100, mps: 30, initialCredits: 4))
        manager.receive(channelID: .leSignaling, payload: open.encode()[...], now: .zero)
        _ = manager.takeOutputs()
        let ours = try manager.connect(psm: SPSM(0x0080), now: .zero)
        guard case .send(let frame)? = manager.takeOutputs().first else { Issue.record("no request"); return }
        let request = try LESignalingCommand(decoding: frame.payload)
        let clash = LESignalingCommand(identifier: request.identifier, body: .leCreditBasedConnectionResponse(
            destinationCID: 0x0040, mtu: 0, mps: 0, initialCredits: 1, result: .connectionSuccessful))
        manager.receive(channelID: .leSignaling, payload: clash.encode()[...], now: .zero)
        let outputs = manager.takeOutputs()
        #expect(outputs.first == .event(.connectionFailed(localCID: ours, psm: SPSM(0x0080), reason: .invalidResponse)))
        #expect(manager.channel(ours) == nil)
        #expect(manager.channelIDs == [0x0040])
        // The real channel still sends within its peer's MPS.
        try manager.send(Array(repeating: 5, count: 60), on: 0x0040)
        let frames = manager.takeOutputs().compactMap { output -> L2CAPBasicFrame? in
            if case .send(let frame) = output { return frame } else { return nil }
        }
        #expect(frames.count == 3 && frames.allSatisfy { $0.channelID.rawValue == 0x0040 && $0.payload.count <= 30 })
    }
}
