import BluewireCore
import Testing

@testable import BluewireL2CAP

/// A scripted hostile peer: a hand-made frame injected where a real stack would never send it.
/// bumble will not overflow credits or exceed MPS on purpose, so these are fakes of the peer's
/// frames, and the manager under test is real.
@Suite struct CreditBasedHostilePeerTests {
    static let psm = SPSM(0x0080)

    /// An open channel: returns the pair and (central CID, peripheral CID).
    func open(_ parameters: CreditBasedChannelParameters = .init(mtu: 100, mps: 30, initialCredits: 5)) throws
        -> (CreditBasedPair, UInt16, UInt16) {
        var pair = CreditBasedPair()
        try pair.peripheral.register(psm: Self.psm, service: .init(parameters: parameters))
        let a = try pair.central.connect(psm: Self.psm, parameters: parameters, now: pair.now)
        pair.run()
        return (pair, a, try #require(pair.peripheralEvents.connected.first))
    }

    /// Injects a K-frame as if the central sent it to the peripheral's channel `b`.
    func inject(_ pair: inout CreditBasedPair, _ b: UInt16, _ payload: [UInt8]) {
        pair.peripheral.receive(channelID: L2CAPChannelID(b), payload: payload[...], now: pair.now)
        pair.run()
    }

    func expectClosed(_ pair: CreditBasedPair, _ a: UInt16, _ b: UInt16, _ violation: CreditBasedFlowViolation) {
        #expect(pair.peripheralEvents.contains(.disconnected(localCID: b, reason: .violation(violation))), "\(pair.peripheralEvents)")
        #expect(pair.centralEvents.contains(.disconnected(localCID: a, reason: .remote)))
        #expect(pair.central.channel(a) == nil && pair.peripheral.channel(b) == nil)
    }

    @Test func kFrameWithoutCreditClosesTheChannel() throws {
        var (pair, a, b) = try open()
        for _ in 0..<5 { inject(&pair, b, [2, 0, 1, 2]) }
        #expect(pair.peripheral.channel(b)?.receiveCredits == 0)
        #expect(pair.peripheral.channel(b)?.receivedSDUCount == 5)
        inject(&pair, b, [2, 0, 1, 2])
        expectClosed(pair, a, b, .kFrameWithoutCredit)
    }

    @Test func creditOverflowClosesTheChannel() throws {
        var (pair, a, b) = try open()
        let flood = LESignalingCommand(identifier: 9, body: .flowControlCreditIndication(cid: a, credits: 65535))
        pair.peripheral.receive(channelID: .leSignaling, payload: flood.encode()[...], now: pair.now)
        pair.run()
        expectClosed(pair, a, b, .creditOverflow(credits: 5 + 65535))
    }

    @Test func sduLongerThanMTUClosesTheChannel() throws {
        var (pair, a, b) = try open()
        inject(&pair, b, [101, 0, 1])
        expectClosed(pair, a, b, .sduLengthExceedsMTU(sduLength: 101, mtu: 100))
    }

    @Test func kFrameLongerThanMPSClosesTheChannel() throws {
        var (pair, a, b) = try open()
        inject(&pair, b, [40, 0] + Array(repeating: 0, count: 29))
        expectClosed(pair, a, b, .kFrameLongerThanMPS(length: 31, mps: 30))
    }

    @Test func moreOctetsThanTheSDULengthClosesTheChannel() throws {
        var (pair, a, b) = try open()
        inject(&pair, b, [30, 0] + Array(repeating: 0, count: 28))
        inject(&pair, b, Array(repeating: 0, count: 3))
        expectClosed(pair, a, b, .sduLongerThanDeclared(sduLength: 30, received: 31))
    }

    @Test func otherChannelsAndTheSignalingChannelKeepWorkingAfterAViolation() throws {
        var (pair, a, b) = try open()
        let c = try pair.central.connect(psm: Self.psm, now: pair.now)
        pair.run()
        inject(&pair, b, [101, 0, 1])
        expectClosed(pair, a, b, .sduLengthExceedsMTU(sduLength: 101, mtu: 100))
        try pair.central.send([1, 2, 3], on: c)
        pair.run()
        let d = try #require(pair.peripheralEvents.connected.last)
        #expect(pair.drain(central: false, d) == [[1, 2, 3]])
    }
}

@Suite struct CreditBasedSimultaneousDisconnectTests {
    @Test func bothSidesDisconnectingAtOnceCloseOnceAndFreeTheCID() throws {
        var pair = CreditBasedPair()
        try pair.peripheral.register(psm: SPSM(0x0080))
        let a = try pair.central.connect(psm: SPSM(0x0080), now: pair.now)
        pair.run()
        let b = try #require(pair.peripheralEvents.connected.first)
        try pair.central.disconnect(a, now: pair.now)
        try pair.peripheral.disconnect(b, now: pair.now)
        pair.run()
        #expect(pair.centralEvents.disconnections == [.local])
        #expect(pair.peripheralEvents.disconnections == [.local])
        #expect(pair.central.deadline == nil && pair.peripheral.deadline == nil)
        // The CID is reused by the next channel, and no stale timeout closes it.
        #expect(try pair.central.connect(psm: SPSM(0x0080), now: pair.now) == a)
        pair.run()
        pair.central.advanceTime(to: MonotonicInstant.zero + .seconds(10))
        pair.run()
        #expect(pair.central.channel(a)?.state == .open)
    }
}
