import BluewireCore
import Testing

@testable import BluewireL2CAP

/// Enhanced credit based requests and responses a well-behaved Bluewire peer does not produce, built
/// by hand (bumble answers "some refused" only for CIDs it already has, and never answers "pending").
@Suite struct CreditBasedEnhancedEdgeTests {
    static let psm = SPSM(0x0080)

    func signaling(_ command: LESignalingCommand) -> CreditBasedOutput {
        .send(L2CAPBasicFrame(channelID: .leSignaling, payload: command.encode()[...]))
    }

    @Test func someConnectionsRefusedForAnInvalidSourceCIDTheRestOpen() throws {
        var manager = CreditBasedChannelManager(role: .peripheral)
        try manager.register(psm: Self.psm, service: .init(parameters: .init(mtu: 64, mps: 64, initialCredits: 2)))
        let request = LESignalingCommand(identifier: 4, body: .creditBasedConnectionRequest(
            spsm: 0x80, mtu: 64, mps: 64, initialCredits: 3, sourceCIDs: L2CAPCIDList([0x0040, 0x0005, 0x0040, 0x0041])))
        manager.receive(channelID: .leSignaling, payload: request.encode()[...], now: .zero)
        let outputs = manager.takeOutputs()
        #expect(outputs.first == signaling(LESignalingCommand(identifier: 4, body: .creditBasedConnectionResponse(
            mtu: 64, mps: 64, initialCredits: 2, result: .someRefusedInvalidSourceCID,
            destinationCIDs: L2CAPCIDList([0x0040, 0x0000, 0x0000, 0x0041])))))
        #expect(manager.channelIDs == [0x0040, 0x0041])
        #expect(manager.channel(0x0041)?.remoteCID == 0x0041 && manager.channel(0x0041)?.sendCredits == 3)
    }

    @Test func sixSourceCIDsAndTooSmallAnMTUAreRefusedForAll() throws {
        var manager = CreditBasedChannelManager(role: .peripheral)
        try manager.register(psm: Self.psm)
        let six = LESignalingCommand(identifier: 5, body: .creditBasedConnectionRequest(
            spsm: 0x80, mtu: 64, mps: 64, initialCredits: 3, sourceCIDs: L2CAPCIDList([0x40, 0x41, 0x42, 0x43, 0x44, 0x45])))
        manager.receive(channelID: .leSignaling, payload: six.encode()[...], now: .zero)
        #expect(manager.takeOutputs().first == signaling(LESignalingCommand(identifier: 5, body: .creditBasedConnectionResponse(
            mtu: 0, mps: 0, initialCredits: 0, result: .allRefusedInvalidParameters, destinationCIDs: L2CAPCIDList(Array(repeating: 0, count: 6))))))
        let small = LESignalingCommand(identifier: 6, body: .creditBasedConnectionRequest(
            spsm: 0x80, mtu: 63, mps: 64, initialCredits: 3, sourceCIDs: L2CAPCIDList([0x40])))
        manager.receive(channelID: .leSignaling, payload: small.encode()[...], now: .zero)
        #expect(manager.takeOutputs().first == signaling(LESignalingCommand(identifier: 6, body: .creditBasedConnectionResponse(
            mtu: 0, mps: 0, initialCredits: 0, result: .allRefusedUnacceptableParameters, destinationCIDs: L2CAPCIDList([0])))))
        #expect(manager.channelIDs.isEmpty)
    }

    @Test func pendingResponseExtendsTheTimeoutThenTheAnswerOpensTheChannels() throws {
        var manager = CreditBasedChannelManager(role: .central)
        let cids = try manager.connectEnhanced(psm: Self.psm, count: 2, now: .zero)
        let request = try LESignalingCommand(decoding: {
            guard case .send(let frame)? = manager.takeOutputs().first else { return [] }
            return Array(frame.payload)
        }())
        let pending = LESignalingCommand(identifier: request.identifier, body: .creditBasedConnectionResponse(
            mtu: 0, mps: 0, initialCredits: 0, result: .allPendingAuthorization, destinationCIDs: L2CAPCIDList([0, 0])))
        manager.receive(channelID: .leSignaling, payload: pending.encode()[...], now: MonotonicInstant.zero + .seconds(1))
        #expect(manager.deadline == MonotonicInstant.zero + .seconds(61))
        manager.advanceTime(to: MonotonicInstant.zero + .seconds(30))
        #expect(manager.takeOutputs().isEmpty)
        let success = LESignalingCommand(identifier: request.identifier, body: .creditBasedConnectionResponse(
            mtu: 100, mps: 64, initialCredits: 5, result: .someRefusedInsufficientResources, destinationCIDs: L2CAPCIDList([0x0050, 0])))
        manager.receive(channelID: .leSignaling, payload: success.encode()[...], now: MonotonicInstant.zero + .seconds(31))
        #expect(manager.takeOutputs() == [
            .event(.connected(localCID: cids[0], psm: Self.psm, initiatedLocally: true)),
            .event(.connectionFailed(localCID: cids[1], psm: Self.psm, reason: .refusedEnhanced(.someRefusedInsufficientResources))),
        ])
        #expect(manager.channel(cids[0])?.remoteCID == 0x0050 && manager.channel(cids[0])?.sendCredits == 5)
    }

    @Test func commandRejectFailsOurConnectionRequest() throws {
        var manager = CreditBasedChannelManager(role: .central)
        let cid = try manager.connect(psm: Self.psm, now: .zero)
        _ = manager.takeOutputs()
        let reject = LESignalingCommand(identifier: 1, body: .commandReject(reason: .commandNotUnderstood, data: []))
        manager.receive(channelID: .leSignaling, payload: reject.encode()[...], now: .zero)
        #expect(manager.takeOutputs() == [.event(.connectionFailed(localCID: cid, psm: Self.psm, reason: .rejected(.commandNotUnderstood)))])
        #expect(manager.channel(cid) == nil && manager.deadline == nil)
    }

    @Test func successfulResponseWithAnInvalidDestinationCIDIsDisconnected() throws {
        var manager = CreditBasedChannelManager(role: .central)
        let cid = try manager.connect(psm: Self.psm, now: .zero)
        _ = manager.takeOutputs()
        let response = LESignalingCommand(identifier: 1, body: .leCreditBasedConnectionResponse(
            destinationCID: 0x0004, mtu: 100, mps: 50, initialCredits: 1, result: .connectionSuccessful))
        manager.receive(channelID: .leSignaling, payload: response.encode()[...], now: .zero)
        let outputs = manager.takeOutputs()
        #expect(outputs.first == .event(.connectionFailed(localCID: cid, psm: Self.psm, reason: .invalidResponse)))
        #expect(outputs.last == signaling(LESignalingCommand(identifier: 2, body: .disconnectionRequest(destinationCID: 0x0004, sourceCID: cid))))
        manager.receive(channelID: .leSignaling, payload: LESignalingCommand(identifier: 2, body: .disconnectionResponse(
            destinationCID: 0x0004, sourceCID: cid)).encode()[...], now: .zero)
        #expect(manager.takeOutputs().isEmpty, "the failure was reported once, not again as a disconnection")
        #expect(manager.channel(cid) == nil)
    }
}
