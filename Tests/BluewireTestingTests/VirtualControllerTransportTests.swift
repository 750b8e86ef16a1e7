import BluewireCore
import BluewireHCI
import BluewireTesting
import BluewireTransport
import Testing

/// Sends a command through a transport and returns the next inbound packet's hex.
func sendThenReceive(_ transport: VirtualTransport, _ iterator: inout HCIInboundPackets.AsyncIterator, _ command: HCICommand) async throws -> String? {
    try await transport.send(command.packet)
    return try await iterator.next()?.hex
}

@Suite("VirtualTransport")
struct VirtualControllerTransportTests {
    @Test("a command sent through the transport is answered on inbound")
    func commandRoundTrip() async throws {
        let link = VirtualLink()
        let transport = VirtualTransport(controller: link.addController(publicAddress: VirtualAddress.centralPublic))
        var inbound = transport.inbound.makeAsyncIterator()
        #expect(try await sendThenReceive(transport, &inbound, .reset) == "04 0e 04 01 03 0c 00")
        #expect(try await sendThenReceive(transport, &inbound, .leReadBufferSize) == "04 0e 07 01 02 20 00 fb 00 08")
        await transport.close()
    }

    @Test("two transports on one link: advertising reaches the scanner, a connection forms and ACL flows both ways")
    func twoHostsOnOneLink() async throws {
        let link = VirtualLink()
        let central = VirtualTransport(controller: link.addController(publicAddress: VirtualAddress.centralPublic))
        let peripheral = VirtualTransport(controller: link.addController(publicAddress: VirtualAddress.peripheralPublic))
        var centralInbound = central.inbound.makeAsyncIterator()
        var peripheralInbound = peripheral.inbound.makeAsyncIterator()
        for (transport, random) in [(central, VirtualAddress.centralRandom), (peripheral, VirtualAddress.peripheralRandom)] {
            for command: HCICommand in [
                .reset, .setEventMask(EventMask(rawValue: eventMaskWithLEMeta)),
                .leSetEventMask(EventMask(rawValue: leMaskLegacyConnection)),
                .leSetRandomAddress(LESetRandomAddress(randomAddress: random)),
            ] {
                try await transport.send(command.packet)
            }
        }
        for _ in 0..<4 {
            _ = try await centralInbound.next()
            _ = try await peripheralInbound.next()
        }
        try await central.send(HCICommand.leSetScanParameters(LESetScanParameters(active: false, ownAddressType: 0x01)).packet)
        try await central.send(HCICommand.leSetScanEnable(LESetScanEnable(enable: true)).packet)
        #expect(try await centralInbound.next()?.hex == "04 0e 04 01 0b 20 00")
        #expect(try await centralInbound.next()?.hex == "04 0e 04 01 0c 20 00")
        try await peripheral.send(HCICommand.leSetAdvertisingParameters(LESetAdvertisingParameters(ownAddressType: 0x01)).packet)
        try await peripheral.send(HCICommand.leSetAdvertisingData(LESetAdvertisingData(advertisingData: AdvertisingScene.advertisingData)).packet)
        try await peripheral.send(HCICommand.leSetAdvertisingEnable(LESetAdvertisingEnable(enable: true)).packet)
        #expect(try await centralInbound.next()?.hex == legacyADVIND)

        try await central.send(HCICommand.leSetScanEnable(LESetScanEnable(enable: false)).packet)
        try await central.send(HCICommand.leCreateConnection(LECreateConnection(peerAddress: VirtualAddress.peripheralRandom)).packet)
        var centralSeen: [String] = []
        for _ in 0..<4 { centralSeen.append(try await centralInbound.next()?.hex ?? "") }
        #expect(centralSeen == ["04 0e 04 01 0c 20 00", "04 0f 04 00 01 0d 20", centralConnectionComplete, channelSelection2])
        var peripheralSeen: [String] = []
        for _ in 0..<5 { peripheralSeen.append(try await peripheralInbound.next()?.hex ?? "") }
        #expect(Array(peripheralSeen.suffix(2)) == [peripheralConnectionComplete, channelSelection2])

        let ping = l2capFrame(payload: 2)
        try await central.send(aclPacket(ping))
        #expect(try await centralInbound.next()?.hex == nocpEvent(1))
        #expect(try await peripheralInbound.next()?.hex == deliveredACL(start: true, ping[...]))
        let pong = l2capFrame(payload: 6)
        try await peripheral.send(aclPacket(pong))
        #expect(try await peripheralInbound.next()?.hex == nocpEvent(1))
        #expect(try await centralInbound.next()?.hex == deliveredACL(start: true, pong[...]))
        await central.close()
        await peripheral.close()
    }

    @Test("a host awaiting inbound sees the supervision timeout when the test advances the clock")
    func timeoutsArriveWhenTheClockAdvances() async throws {
        let scene = AdvertisingScene.connected()
        let transport = VirtualTransport(controller: scene.central)
        let waiter = Task {
            var inbound = transport.inbound.makeAsyncIterator()
            return try await inbound.next()?.hex
        }
        expectCommandComplete(scene.peripheral, .reset)
        await scene.link.clock.advance(by: .seconds(5))
        #expect(try await waiter.value == "04 05 04 00 40 00 08")
        await transport.close()
    }

    @Test("close ends inbound and refuses sends; a new transport picks up what the controller produced meanwhile")
    func closeAndReattach() async throws {
        let scene = AdvertisingScene.connected()
        let first = VirtualTransport(controller: scene.peripheral)
        await first.close()
        await first.close()
        var ended = first.inbound.makeAsyncIterator()
        #expect(try await ended.next() == nil)
        await #expect(throws: TransportError.closed) { try await first.send(HCICommand.reset.packet) }

        scene.central.receive(hostPacket: aclPacket(l2capFrame(payload: 1)))
        let second = VirtualTransport(controller: scene.peripheral)
        var inbound = second.inbound.makeAsyncIterator()
        #expect(try await inbound.next()?.hex == deliveredACL(start: true, l2capFrame(payload: 1)[...]))
        await second.close()
    }
}
