import BluewireCore
import Testing

@testable import BluewireL2CAP

@Suite struct CreditBasedChannelManagerTests {
    static let psm = SPSM(0x0080)

    func pair(service: CreditBasedChannelManager.Service = .init()) throws -> CreditBasedPair {
        var pair = CreditBasedPair()
        try pair.peripheral.register(psm: Self.psm, service: service)
        try pair.central.register(psm: Self.psm, service: service)
        return pair
    }

    @Test func leChannelOpensBothWaysAndClosesFromEitherSide() throws {
        var pair = try pair()
        let a = try pair.central.connect(psm: Self.psm, now: pair.now)
        pair.run()
        #expect(pair.centralEvents.connected == [a])
        #expect(pair.peripheralEvents.connected.count == 1)
        let b = try #require(pair.peripheralEvents.connected.first)
        #expect(pair.central.channel(a)?.remoteCID == b && pair.peripheral.channel(b)?.remoteCID == a)
        #expect(pair.central.channel(a)?.state == .open)
        // The other way round: the peripheral opens one to the central.
        let c = try pair.peripheral.connect(psm: Self.psm, now: pair.now)
        pair.run()
        #expect(pair.peripheralEvents.connected == [b, c])
        #expect(pair.central.channelIDs.count == 2)
        // Close one from each side.
        try pair.central.disconnect(a, now: pair.now)
        pair.run()
        #expect(pair.centralEvents.contains(.disconnected(localCID: a, reason: .local)))
        #expect(pair.peripheralEvents.contains(.disconnected(localCID: b, reason: .remote)))
        try pair.central.disconnect(try #require(pair.central.channelIDs.first), now: pair.now)
        pair.run()
        #expect(pair.peripheralEvents.contains(.disconnected(localCID: c, reason: .remote)))
        #expect(pair.central.channelIDs.isEmpty && pair.peripheral.channelIDs.isEmpty)
        #expect(pair.central.deadline == nil && pair.peripheral.deadline == nil)
    }

    @Test func unknownPSMIsRefusedByName() throws {
        var pair = CreditBasedPair()
        let a = try pair.central.connect(psm: SPSM(0x0081), now: pair.now)
        pair.run()
        #expect(pair.centralEvents.failures == [.refused(.spsmNotSupported)])
        #expect(pair.central.channel(a) == nil)
        _ = try pair.central.connectEnhanced(psm: SPSM(0x0081), count: 3, now: pair.now)
        pair.run()
        #expect(pair.centralEvents.failures.dropFirst() == [.refusedEnhanced(.allRefusedSPSMNotSupported),
                                                           .refusedEnhanced(.allRefusedSPSMNotSupported),
                                                           .refusedEnhanced(.allRefusedSPSMNotSupported)])
    }

    @Test(arguments: [
        (L2CAPLinkSecurity.open, LECreditBasedConnectionResult.insufficientAuthentication),
        (L2CAPLinkSecurity(hasKey: true), .insufficientEncryption),
        (L2CAPLinkSecurity(isEncrypted: true, isAuthenticated: true, keySize: 10, hasKey: true), .encryptionKeySizeTooShort),
    ])
    func insufficientSecurityIsRefusedWithTheRightResult(link: L2CAPLinkSecurity, expected: LECreditBasedConnectionResult) throws {
        var pair = try pair(service: .init(security: .authenticated))
        pair.peripheral.linkSecurity = link
        _ = try pair.central.connect(psm: Self.psm, now: pair.now)
        _ = try pair.central.connectEnhanced(psm: Self.psm, count: 2, now: pair.now)
        pair.run()
        let enhanced = CreditBasedConnectionResult(rawValue: expected.rawValue)
        #expect(pair.centralEvents.failures == [.refused(expected), .refusedEnhanced(enhanced), .refusedEnhanced(enhanced)])
        pair.peripheral.linkSecurity = L2CAPLinkSecurity(isEncrypted: true, isAuthenticated: true, keySize: 16, hasKey: true)
        _ = try pair.central.connect(psm: Self.psm, now: pair.now)
        pair.run()
        #expect(pair.centralEvents.connected.count == 1)
    }

    @Test func fiveEnhancedChannelsInOneRequestCarryDataAndReconfigure() throws {
        var pair = try pair(service: .init(parameters: .init(mtu: 100, mps: 64, initialCredits: 4)))
        let cids = try pair.central.connectEnhanced(
            psm: Self.psm, count: 5, parameters: .init(mtu: 100, mps: 64, initialCredits: 4), now: pair.now)
        pair.run()
        let requests = pair.wire.filter { $0.fromCentral && $0.frame.channelID == .leSignaling }
        #expect(requests.count == 1, "one Credit Based Connection Request for five channels")
        #expect(pair.centralEvents.connected == cids)
        let remote = pair.peripheralEvents.connected
        #expect(remote.count == 5)
        for (index, cid) in cids.enumerated() {
            try pair.central.send([UInt8(index)] + Array(repeating: 0xAB, count: 99), on: cid)
        }
        pair.run()
        for (index, cid) in remote.enumerated() {
            #expect(pair.drain(central: false, cid) == [[UInt8(index)] + Array(repeating: 0xAB, count: 99)])
        }
        // Raising our MTU on all five: the peripheral may then send 200-octet SDUs.
        #expect(throws: CreditBasedChannelError.sduExceedsMTU(length: 200, mtu: 100)) {
            try pair.peripheral.send(Array(repeating: 1, count: 200), on: remote[0])
        }
        try pair.central.reconfigure(cids, mtu: 200, mps: 100, now: pair.now)
        pair.run()
        #expect(pair.centralEvents.contains(.reconfigured(localCIDs: cids, mtu: 200, mps: 100, byPeer: false)))
        #expect(pair.peripheralEvents.contains(.reconfigured(localCIDs: remote, mtu: 200, mps: 100, byPeer: true)))
        try pair.peripheral.send(Array(repeating: 7, count: 200), on: remote[0])
        pair.run()
        #expect(pair.drain(central: true, cids[0]) == [Array(repeating: 7, count: 200)])
        // Shrinking the MTU is refused locally; the peer refuses it too (checked by hand below).
        #expect(throws: CreditBasedChannelError.invalidReconfiguration) {
            try pair.central.reconfigure(cids, mtu: 150, mps: 100, now: pair.now)
        }
    }

    @Test func peerRefusesAReconfigurationThatShrinksTheMTU() throws {
        var pair = try pair()
        let cids = try pair.central.connectEnhanced(psm: Self.psm, count: 2, now: pair.now)
        pair.run()
        // Hand-made request: MTU 100 (below the 512 in force) on both channels.
        let request = LESignalingCommand(identifier: 0x42, body: .creditBasedReconfigureRequest(
            mtu: 100, mps: 247, destinationCIDs: L2CAPCIDList(cids)))
        pair.peripheral.receive(channelID: .leSignaling, payload: request.encode()[...], now: pair.now)
        let reply = pair.peripheral.takeOutputs()
        #expect(reply == [.send(L2CAPBasicFrame(channelID: .leSignaling, payload: LESignalingCommand(
            identifier: 0x42, body: .creditBasedReconfigureResponse(result: .reductionInMTUNotAllowed)).encode()[...]))])
        let unknown = LESignalingCommand(identifier: 0x43, body: .creditBasedReconfigureRequest(
            mtu: 600, mps: 247, destinationCIDs: L2CAPCIDList([0x0070])))
        pair.peripheral.receive(channelID: .leSignaling, payload: unknown.encode()[...], now: pair.now)
        #expect(pair.peripheral.takeOutputs() == [.send(L2CAPBasicFrame(channelID: .leSignaling, payload: LESignalingCommand(
            identifier: 0x43, body: .creditBasedReconfigureResponse(result: .destinationCIDsInvalid)).encode()[...]))])
    }

    @Test func mixedSizeSDUsArriveByteExactAndInOrderWithBoundedMemory() throws {
        let parameters = CreditBasedChannelParameters(mtu: 1000, mps: 50, initialCredits: 30)
        var pair = try pair(service: .init(parameters: parameters))
        let a = try pair.central.connect(psm: Self.psm, parameters: parameters, now: pair.now)
        pair.run()
        let b = try #require(pair.peripheralEvents.connected.first)
        var random = TestBytes(state: 0x9E37_79B9_7F4A_7C15)
        var sent: [[UInt8]] = [[0], Array(repeating: 0xFF, count: 1000), [], Array(repeating: 1, count: 48)]
        for _ in 0..<200 { sent.append(random.bytes(Int(random.next() % 1001))) }
        var sentBack: [[UInt8]] = []
        var received: [[UInt8]] = []
        var receivedBack: [[UInt8]] = []
        var peak = 0
        for sdu in sent {
            try pair.central.send(sdu, on: a)
            let back = Array(sdu.reversed())
            sentBack.append(back)
            try pair.peripheral.send(back, on: b)
            pair.run()
            peak = max(peak, pair.peripheral.channel(b)?.bufferedReceiveOctets ?? 0)
            // The application reads every other round, so credits run dry and sending waits.
            if sentBack.count % 2 == 0 {
                received += pair.drain(central: false, b)
                receivedBack += pair.drain(central: true, a)
            }
        }
        for _ in 0..<100 where received.count < sent.count || receivedBack.count < sent.count {
            received += pair.drain(central: false, b)
            receivedBack += pair.drain(central: true, a)
        }
        #expect(received == sent)
        #expect(receivedBack == sentBack)
        #expect(peak <= 30 * 50, "receive buffer \(peak) octets exceeds credits × MPS")
        #expect(pair.central.channel(a)?.queuedSendCount == 0)
        // Once everything is read, every credit is back with the sender or due to it (returned in
        // batches of half the initial credits).
        let centralChannel = try #require(pair.central.channel(a))
        let peripheralChannel = try #require(pair.peripheral.channel(b))
        #expect(centralChannel.sendCredits + peripheralChannel.creditsToReturn == 30)
        #expect(peripheralChannel.sendCredits + centralChannel.creditsToReturn == 30)
        #expect(peripheralChannel.creditsToReturn < 15 && centralChannel.creditsToReturn < 15)
    }

    @Test func signalingTimeoutFailsTheConnectionAndClosesADisconnection() throws {
        var pair = try pair()
        pair.dropping = true
        let a = try pair.central.connect(psm: Self.psm, now: pair.now)
        pair.run()
        #expect(pair.central.deadline == MonotonicInstant.zero + .seconds(2))
        pair.central.advanceTime(to: MonotonicInstant.zero + .milliseconds(1999))
        pair.run()
        #expect(pair.centralEvents.isEmpty)
        pair.central.advanceTime(to: MonotonicInstant.zero + .seconds(2))
        pair.run()
        #expect(pair.centralEvents == [.connectionFailed(localCID: a, psm: Self.psm, reason: .timeout)])
        #expect(pair.central.channel(a) == nil && pair.central.deadline == nil)
        pair.dropping = false
        let c = try pair.central.connect(psm: Self.psm, now: pair.now)
        pair.run()
        pair.dropping = true
        try pair.central.disconnect(c, now: pair.now)
        pair.run()
        pair.central.advanceTime(to: MonotonicInstant.zero + .seconds(3))
        pair.run()
        #expect(pair.centralEvents.disconnections == [.timeout])
    }

    @Test func commandsNotUnderstoodAreRejectedAndConnectionParameterUpdatesStillWork() throws {
        var manager = CreditBasedChannelManager(role: .central)
        manager.receive(channelID: .leSignaling, payload: [0x08, 0x09, 0x01, 0x00, 0xEE], now: .zero)
        #expect(manager.takeOutputs() == [.send(L2CAPBasicFrame(channelID: .leSignaling, payload: [0x01, 0x09, 0x02, 0x00, 0x00, 0x00]))])
        manager.receive(channelID: .leSignaling, payload: [0x12, 0x01, 0x08, 0x00, 0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0x2C, 0x01], now: .zero)
        let outputs = manager.takeOutputs()
        #expect(outputs.first == .send(L2CAPBasicFrame(channelID: .leSignaling, payload: [0x13, 0x01, 0x02, 0x00, 0x00, 0x00])))
        #expect(outputs.count == 2)
        // A Disconnection Request for a channel that does not exist: invalid CID in request.
        manager.receive(channelID: .leSignaling, payload: [0x06, 0x03, 0x04, 0x00, 0x40, 0x00, 0x41, 0x00], now: .zero)
        #expect(manager.takeOutputs() == [.send(L2CAPBasicFrame(channelID: .leSignaling,
            payload: [0x01, 0x03, 0x06, 0x00, 0x02, 0x00, 0x40, 0x00, 0x41, 0x00]))])
        // K-frames for a CID that is not ours are the caller's business.
        let taken = manager.receive(channelID: L2CAPChannelID(0x0050), payload: [1, 0, 1], now: .zero)
        #expect(!taken)
    }

    /// Core Vol 3 Part A §4.6: a Disconnection Request whose DCID is one of ours but whose SCID is not
    /// that channel's remote CID is discarded silently. A Command Reject would say the DCID is
    /// invalid, which it is not; the 6.1 kernel sent such a request when it had paired the CIDs of a
    /// two-channel response with its sockets in another order than its request listed them.
    @Test func disconnectionRequestWithAForeignSourceCIDIsDiscarded() throws {
        var pair = try pair()
        let a = try pair.central.connect(psm: Self.psm, now: pair.now)
        pair.run()
        let b = try #require(pair.peripheralEvents.connected.first)
        let wrongSource = a &+ 1
        let request = LESignalingCommand(identifier: 9, body: .disconnectionRequest(destinationCID: b, sourceCID: wrongSource))
        pair.peripheral.receive(channelID: .leSignaling, payload: request.encode()[...], now: pair.now)
        #expect(pair.peripheral.takeOutputs() == [.event(.signaling(.ignored(.disconnectionRequest)))])
        #expect(pair.peripheral.channel(b)?.state == .open)
        // The channel's own request still closes it.
        try pair.central.disconnect(a, now: pair.now)
        pair.run()
        #expect(pair.peripheralEvents.contains(.disconnected(localCID: b, reason: .remote)))
    }

    @Test func registryAcceptsOnlyLEPSMRanges() throws {
        var manager = CreditBasedChannelManager(role: .peripheral)
        #expect(throws: CreditBasedChannelError.invalidPSM(SPSM(0x0100))) { try manager.register(psm: SPSM(0x0100)) }
        #expect(throws: CreditBasedChannelError.invalidPSM(SPSM(0))) { try manager.register(psm: SPSM(0)) }
        try manager.register(psm: .eatt)
        try manager.register(psm: SPSM(0x0080))
        #expect(throws: CreditBasedChannelError.psmAlreadyRegistered(.eatt)) { try manager.register(psm: .eatt) }
        #expect(manager.freeDynamicPSM() == SPSM(0x0081))
        #expect(throws: CreditBasedChannelError.invalidChannelCount(6)) {
            _ = try manager.connectEnhanced(psm: .eatt, count: 6, now: .zero)
        }
    }

    @Test func sixtyFourChannelsExhaustTheLECIDRange() throws {
        var pair = try pair()
        for _ in 0..<64 { _ = try pair.central.connect(psm: Self.psm, now: pair.now) }
        #expect(throws: CreditBasedChannelError.noFreeChannelID) { _ = try pair.central.connect(psm: Self.psm, now: pair.now) }
        pair.run()
        #expect(pair.centralEvents.connected.count == 64)
        #expect(Set(pair.central.channelIDs) == Set(UInt16(0x40)...0x7F))
        #expect(throws: CreditBasedChannelError.noFreeChannelID) { _ = try pair.peripheral.connect(psm: Self.psm, now: pair.now) }
        // A request naming a source CID that already has a channel is refused by name.
        let again = LESignalingCommand(identifier: 0x60, body: .leCreditBasedConnectionRequest(
            spsm: 0x80, sourceCID: 0x0045, mtu: 100, mps: 100, initialCredits: 1))
        pair.peripheral.receive(channelID: .leSignaling, payload: again.encode()[...], now: pair.now)
        #expect(pair.peripheral.takeOutputs().first == .send(L2CAPBasicFrame(channelID: .leSignaling, payload: LESignalingCommand(
            identifier: 0x60, body: .leCreditBasedConnectionResponse(
                destinationCID: 0, mtu: 0, mps: 0, initialCredits: 0, result: .sourceCIDAlreadyAllocated)).encode()[...])))
    }
}
