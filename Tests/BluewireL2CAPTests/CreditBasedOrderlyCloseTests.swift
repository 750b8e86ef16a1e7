import BluewireCore
import Testing

@testable import BluewireL2CAP

/// `disconnect` is a socket's close: SDUs queued for credits go first, the Disconnection Request
/// (Core Vol 3 Part A §4.6) only after their last K-frame; `abort` drops them and disconnects now.
@Suite struct CreditBasedOrderlyCloseTests {
    static let psm = SPSM(0x0080)

    /// A channel whose peripheral grants `credits` and returns none until its SDUs are read.
    static func opened(credits: Int) throws -> (CreditBasedPair, UInt16, UInt16) {
        var pair = CreditBasedPair()
        try pair.peripheral.register(psm: psm, service: .init(parameters: CreditBasedChannelParameters(mtu: 512, mps: 188, initialCredits: credits)))
        let cid = try pair.central.connect(psm: psm, now: pair.now)
        pair.run()
        let remote = try #require(pair.peripheralEvents.connected.first)
        return (pair, cid, remote)
    }

    /// Whether `frame` is a Disconnection Request (code 0x06) on the signaling channel.
    static func isDisconnectionRequest(_ frame: L2CAPBasicFrame) -> Bool {
        frame.channelID == .leSignaling && frame.payload.first == 0x06
    }

    @Test func queuedSDUsGoOutBeforeTheDisconnectionRequest() throws {
        var (pair, cid, remote) = try Self.opened(credits: 3)
        let sdus = (0..<4).map { index in [UInt8](repeating: UInt8(index), count: 512) }
        for sdu in sdus { try pair.central.send(sdu, on: cid) }
        pair.run()
        // 3 credits: the first SDU's three K-frames went; three SDUs wait.
        #expect(pair.central.channel(cid)?.queuedSendCount == 3)
        try pair.central.disconnect(cid, now: pair.now)
        pair.run()
        #expect(!pair.wire.contains { $0.fromCentral && Self.isDisconnectionRequest($0.frame) }, "no Disconnection Request while SDUs wait")
        #expect(pair.central.channel(cid)?.closesWhenSent == true)
        #expect(throws: CreditBasedChannelError.channelNotOpen(cid)) { try pair.central.send([1], on: cid) }
        // The peripheral reads (and so credits) the SDUs as they complete: the last one completes in
        // the same exchange as the Disconnection Request that follows it, so it is counted by its
        // event rather than read.
        let read = pair.drain(central: false, remote)
        #expect(read == Array(sdus.prefix(read.count)))
        let completed = pair.peripheralEvents.filter { $0 == .sduReceived(localCID: remote) }.count
        #expect(completed == sdus.count, "SDUs completed at the peer: \(completed) of \(sdus.count)")
        let closedAt = try #require(pair.peripheralEvents.firstIndex(of: .disconnected(localCID: remote, reason: .remote)))
        let lastSDU = try #require(pair.peripheralEvents.lastIndex(of: .sduReceived(localCID: remote)))
        #expect(lastSDU < closedAt, "the peer had every SDU before the channel closed")
        let request = try #require(pair.wire.lastIndex { $0.fromCentral && Self.isDisconnectionRequest($0.frame) })
        let lastKFrame = try #require(pair.wire.lastIndex { $0.fromCentral && $0.frame.channelID.rawValue == remote })
        #expect(lastKFrame < request, "the last K-frame went before the Disconnection Request")
        #expect(pair.centralEvents.disconnections == [.local])
        #expect(pair.peripheralEvents.disconnections == [.remote])
    }

    @Test func abortDropsTheQueueAndDisconnectsAtOnce() throws {
        var (pair, cid, remote) = try Self.opened(credits: 3)
        for index in 0..<4 { try pair.central.send([UInt8](repeating: UInt8(index), count: 512), on: cid) }
        pair.run()
        try pair.central.abort(cid, now: pair.now)
        pair.run()
        #expect(pair.centralEvents.disconnections == [.local])
        #expect(pair.drain(central: false, remote).count <= 1)
        #expect(pair.central.channel(cid) == nil)
    }

    @Test func disconnectWithNothingQueuedGoesAtOnce() throws {
        var (pair, cid, _) = try Self.opened(credits: 3)
        try pair.central.disconnect(cid, now: pair.now)
        #expect(pair.central.takeOutputs().contains { if case .send(let frame) = $0 { return Self.isDisconnectionRequest(frame) } else { return false } })
    }
}
