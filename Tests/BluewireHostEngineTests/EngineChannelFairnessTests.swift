import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import BluewireL2CAP
import Testing

/// ACL buffers shared between ATT and a credit based channel on the same link (issue: a channel at full
/// speed must not starve ATT requests). Two engines on the virtual link with bumble's 64 buffers of 27
/// octets: the channel queues far more than the buffers hold, then a GATT read is asked for.
@Suite("Host engine: ATT is not starved by a busy channel")
struct EngineChannelFairnessTests {
    /// The position, among the central's ACL packets from `start`, of the first ATT PDU's start fragment.
    static func firstATTPacket(in written: [HCIPacket], from start: Int) -> Int? {
        var acl = 0
        for packet in written[start...] where packet.type == .acl {
            let p = packet.payload
            let s = p.startIndex
            let isStart = (p[s &+ 1] >> 4) & 0b11 != 0b01
            if isStart, p.count >= 8, UInt16(p[s &+ 6]) | UInt16(p[s &+ 7]) << 8 == 0x0004 { return acl }
            acl += 1
        }
        return nil
    }

    @Test("a read asked while 20 SDUs of 2,000 octets wait goes out after the K-frame under way, not after the backlog")
    func readOvertakesTheChannelBacklog() throws {
        var pair = try LinkedEngines()
        var builder = GATTDatabaseBuilder()
        try builder.addService(BluetoothUUID(0xFFF0))
        let value = try builder.addCharacteristic(BluetoothUUID(0xFFF1), properties: [.read], permissions: [.read], value: .cached([0x42]))
        pair.peripheral.engine.setDatabase(builder.build())
        pair.peripheral.perform(.registerServer(
            spsm: SPSM(0x0080), parameters: CreditBasedChannelParameters(mtu: 2_048, mps: 247, initialCredits: 200), security: .none))
        let open = pair.central.perform(.openChannel(
            connection: LinkedEngines.firstHandle, spsm: SPSM(0x0080), parameters: CreditBasedChannelParameters(mtu: 2_048, mps: 247, initialCredits: 10)))
        pair.pump()
        let channel = try #require(pair.central.openedChannel(open))
        let served = try #require(pair.peripheral.incomingChannels.first)

        let start = pair.central.written.count
        let sdus = (0..<20).map { seed in (0..<2_000).map { UInt8(truncatingIfNeeded: $0 &+ seed) } }
        for sdu in sdus { pair.central.perform(.sendSDU(connection: LinkedEngines.firstHandle, cid: channel.cid, sdu)) }
        let queued = pair.central.engine.aclQueuedCount(handle: LinkedEngines.firstHandle)
        // 200 credits let 180 K-frames of up to 251 octets go: some 1,800 ACL packets for 64 buffers.
        #expect(queued > 1_000)
        // The test's own database: its handles are known without a discovery.
        pair.central.perform(.gatt(connection: LinkedEngines.firstHandle, .cachedDiscovery))
        let read = pair.central.perform(.gatt(connection: LinkedEngines.firstHandle, .read(handle: value.valueHandle)))
        pair.pump()

        #expect(pair.central.result(read) == .success(.value([0x42])))
        #expect(pair.peripheral.takeSDUs(cid: served.cid) == sdus)
        let position = try #require(Self.firstATTPacket(in: pair.central.written, from: start))
        // The 64 packets in the controller's buffers when the read was asked, then the rest of the
        // K-frame under way (a K-frame of 251 octets is 10 ACL packets of 27): then the read.
        #expect(position <= 64 + 10, "the read went out after \(position) channel packets")
    }
}
