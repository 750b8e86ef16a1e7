import BluewireCore
import BluewireHCI
import BluewireTesting
import Testing

/// LE Connection Complete as each side sees it with the HCI codec's default connection parameters
/// (interval 0x0018, latency 0, supervision timeout 0x01F4), handle 0x0040 on both controllers.
let centralConnectionComplete = "04 3e 13 01 00 40 00 00 01 \(peripheralRandomWire) 18 00 00 00 f4 01 00"
let peripheralConnectionComplete = "04 3e 13 01 00 40 00 01 01 \(centralRandomWire) 18 00 00 00 f4 01 00"
/// LE Channel Selection Algorithm: both controllers support CSA #2.
let channelSelection2 = "04 3e 04 14 40 00 01"

extension AdvertisingScene {
    /// Connects the central to the legacy-advertising peripheral; returns the central's output after the
    /// Command Status.
    @discardableResult
    func connectLegacy() -> [String] {
        advertiseLegacy()
        let output = hexLines(central.receive(hostPacket: HCICommand.leCreateConnection(
            LECreateConnection(peerAddress: VirtualAddress.peripheralRandom)).packet))
        #expect(output.first == "04 0f 04 00 01 0d 20", "Command Status for LE Create Connection")
        return Array(output.dropFirst())
    }

    /// A connected pair; `configure` applies to both controllers, then `peripheral` to the peripheral.
    static func connected(
        timing: VirtualLink.Timing = .immediate, configure: Configure = { _ in }, peripheral: Configure = { _ in }
    ) -> AdvertisingScene {
        let scene = AdvertisingScene(timing: timing, central: configure, peripheral: { configure(&$0); peripheral(&$0) })
        scene.connectLegacy()
        // With radio timing the connection is made at the next advertising event, 100 ms later.
        if timing.modelsRadio { scene.link.clock.advance(by: .milliseconds(100)) }
        #expect(scene.link.connections.count == 1)
        _ = scene.central.takeOutput()
        _ = scene.peripheral.takeOutput()
        return scene
    }
}

@Suite("VirtualController connections")
struct VirtualControllerConnectionTests {
    @Test("LE Create Connection: Command Status, then LE Connection Complete on both sides, and advertising stops")
    func legacyConnection() {
        let scene = AdvertisingScene()
        #expect(scene.connectLegacy() == [centralConnectionComplete, channelSelection2])
        #expect(hexLines(scene.peripheral.takeOutput()) == [peripheralConnectionComplete, channelSelection2])
        #expect(scene.link.connections == [VirtualLink.ConnectionInfo(
            central: 0, centralHandle: 0x40, peripheral: 1, peripheralHandle: 0x40, interval: 0x18, latency: 0,
            supervisionTimeout: 0x1F4, centralToPeripheralPHY: 1, peripheralToCentralPHY: 1,
            centralToPeripheralOctets: 27, peripheralToCentralOctets: 27, isLost: false)])
        // A scanner started now hears nothing: advertising ended with the connection.
        let observer = scene.link.addController(publicAddress: VirtualAddress.thirdPublic)
        bringUpController(observer, random: VirtualAddress.thirdRandom)
        expectCommandComplete(observer, .leSetScanParameters(LESetScanParameters(active: true, ownAddressType: 0x01)))
        #expect(expectCommandComplete(observer, .leSetScanEnable(LESetScanEnable(enable: true))).count == 1)
    }

    @Test("an initiator waiting for an advertiser connects as soon as it starts advertising")
    func createConnectionBeforeAdvertising() {
        let scene = AdvertisingScene()
        #expect(hexLines(scene.central.receive(hostPacket: HCICommand.leCreateConnection(
            LECreateConnection(peerAddress: VirtualAddress.peripheralRandom)).packet)) == ["04 0f 04 00 01 0d 20"])
        scene.link.clock.advance(by: .seconds(5))
        #expect(scene.central.takeOutput().isEmpty, "nobody to connect to yet")
        let enabled = hexLines(scene.peripheral.receive(hostPacket: HCICommand.leSetAdvertisingParameters(
            LESetAdvertisingParameters(ownAddressType: 0x01)).packet)
            + scene.peripheral.receive(hostPacket: HCICommand.leSetAdvertisingEnable(LESetAdvertisingEnable(enable: true)).packet))
        #expect(enabled == ["04 0e 04 01 06 20 00", "04 0e 04 01 0a 20 00", peripheralConnectionComplete, channelSelection2])
        #expect(hexLines(scene.central.takeOutput()) == [centralConnectionComplete, channelSelection2])
    }

    @Test("LE Create Connection Cancel: Command Complete, then Connection Complete with Unknown Connection Identifier")
    func cancel() {
        let scene = AdvertisingScene()
        #expect(hexLines(scene.central.receive(hostPacket: HCICommand.leCreateConnectionCancel.packet)) == ["04 0e 04 01 0e 20 0c"],
                "nothing to cancel")
        scene.central.receive(hostPacket: HCICommand.leCreateConnection(LECreateConnection(peerAddress: VirtualAddress.peripheralRandom)).packet)
        #expect(hexLines(scene.central.receive(hostPacket: HCICommand.leCreateConnection(
            LECreateConnection(peerAddress: VirtualAddress.peripheralRandom)).packet)) == ["04 0f 04 0c 01 0d 20"], "one at a time")
        #expect(hexLines(scene.central.receive(hostPacket: HCICommand.leCreateConnectionCancel.packet)) == [
            "04 0e 04 01 0e 20 00",
            "04 3e 13 01 02 00 00 00 01 \(peripheralRandomWire) 00 00 00 00 00 00 00",
        ])
        scene.advertiseLegacy()
        #expect(scene.central.takeOutput().isEmpty, "a cancelled initiator does not connect later")
        #expect(scene.link.connections.isEmpty)
    }

    @Test("LE Extended Create Connection to extended advertising: Enhanced Connection Complete and Advertising Set Terminated")
    func extendedConnection() {
        let scene = AdvertisingScene(leEventMask: leMaskAll)
        scene.advertiseExtended(properties: [.connectable], data: AdvertisingScene.advertisingData)
        let output = hexLines(scene.central.receive(hostPacket: HCICommand.leExtendedCreateConnection(
            LEExtendedCreateConnection(peerAddress: VirtualAddress.peripheralRandom)).packet))
        let zeros = Array(repeating: "00", count: 12).joined(separator: " ")
        #expect(output == [
            "04 0f 04 00 01 43 20",
            "04 3e 1f 0a 00 40 00 00 01 \(peripheralRandomWire) \(zeros) 18 00 00 00 f4 01 00",
            channelSelection2,
        ])
        #expect(hexLines(scene.peripheral.takeOutput()) == [
            "04 3e 1f 0a 00 40 00 01 01 \(centralRandomWire) \(zeros) 18 00 00 00 f4 01 00",
            channelSelection2,
            // Status, Advertising_Handle 0, Connection_Handle 0x0040, one completed advertising event.
            "04 3e 06 12 00 00 40 00 01",
        ])
    }

    @Test("a second LE Create Connection to a connected device fails with Connection Already Exists")
    func connectionAlreadyExists() {
        let scene = AdvertisingScene.connected()
        #expect(hexLines(scene.central.receive(hostPacket: HCICommand.leCreateConnection(
            LECreateConnection(peerAddress: VirtualAddress.peripheralRandom)).packet)) == ["04 0f 04 0b 01 0d 20"])
    }

    @Test("Disconnect: the local host hears Connection Terminated By Local Host, the remote host the reason given")
    func disconnectReasons() {
        let scene = AdvertisingScene.connected()
        #expect(hexLines(scene.central.receive(hostPacket: HCICommand.disconnect(Disconnect(connectionHandle: 0x41)).packet))
            == ["04 0f 04 02 01 06 04"], "unknown handle")
        #expect(hexLines(scene.central.receive(hostPacket: HCICommand.disconnect(
            Disconnect(connectionHandle: 0x40, reason: HCIStatus(rawValue: 0x16))).packet)) == ["04 0f 04 12 01 06 04"],
            "0x16 is not a reason a host may give")
        #expect(hexLines(scene.peripheral.receive(hostPacket: HCICommand.disconnect(
            Disconnect(connectionHandle: 0x40, reason: HCIStatus(rawValue: 0x15))).packet))
            == ["04 0f 04 00 01 06 04", "04 05 04 00 40 00 16"])
        #expect(hexLines(scene.central.takeOutput()) == ["04 05 04 00 40 00 15"])
        #expect(scene.link.connections.isEmpty)
        #expect(scene.central.connectionHandles.isEmpty && scene.peripheral.connectionHandles.isEmpty)
    }

    @Test("LE Connection Update: both hosts hear the new parameters; unchanged ones only reach the host that asked")
    func connectionUpdate() {
        let scene = AdvertisingScene.connected()
        let update = HCICommand.leConnectionUpdate(LEConnectionUpdate(connectionHandle: 0x40, connection: LEConnectionParameters(
            connectionIntervalMin: 0x0010, connectionIntervalMax: 0x0010, maxLatency: 2, supervisionTimeout: 0x0100)))
        let complete = "04 3e 0a 03 00 40 00 10 00 02 00 00 01"
        #expect(hexLines(scene.central.receive(hostPacket: update.packet)) == ["04 0f 04 00 01 13 20", complete])
        #expect(hexLines(scene.peripheral.takeOutput()) == [complete])
        #expect(hexLines(scene.central.receive(hostPacket: update.packet)) == ["04 0f 04 00 01 13 20", complete])
        #expect(scene.peripheral.takeOutput().isEmpty)
        #expect(scene.link.connections.first?.interval == 0x10)
        // Supervision timeout 0x000A (100 ms) is too short for a 20 ms interval with latency 2.
        let invalid = HCICommand.leConnectionUpdate(LEConnectionUpdate(connectionHandle: 0x40, connection: LEConnectionParameters(
            connectionIntervalMin: 0x0010, connectionIntervalMax: 0x0010, maxLatency: 2, supervisionTimeout: 0x000A)))
        #expect(hexLines(scene.central.receive(hostPacket: invalid.packet)) == ["04 0f 04 12 01 13 20"])
    }

    @Test("a peripheral without the Connection Parameters Request procedure cannot update: Unsupported Remote Feature")
    func peripheralConnectionUpdate() {
        let scene = AdvertisingScene.connected()
        let update = HCICommand.leConnectionUpdate(LEConnectionUpdate(connectionHandle: 0x40, connection: LEConnectionParameters(
            connectionIntervalMin: 0x0010, connectionIntervalMax: 0x0010)))
        #expect(hexLines(scene.peripheral.receive(hostPacket: update.packet))
            == ["04 0f 04 00 01 13 20", "04 3e 0a 03 1a 40 00 18 00 00 00 f4 01"])
        #expect(scene.central.takeOutput().isEmpty)

        let capable = AdvertisingScene.connected { $0.leFeatures.insert(.connectionParametersRequestProcedure) }
        #expect(hexLines(capable.peripheral.receive(hostPacket: update.packet))
            == ["04 0f 04 00 01 13 20", "04 3e 0a 03 00 40 00 10 00 00 00 f4 01"])
        #expect(hexLines(capable.central.takeOutput()) == ["04 3e 0a 03 00 40 00 10 00 00 00 f4 01"])
    }

    @Test("LE Set Data Length: Command Complete, then Data Length Change on both sides with each direction's values")
    func dataLength() {
        let scene = AdvertisingScene.connected()
        #expect(hexLines(scene.central.receive(hostPacket: HCICommand.leSetDataLength(LESetDataLength(connectionHandle: 0x40)).packet)) == [
            "04 0e 06 01 22 20 00 40 00",
            "04 3e 0b 07 40 00 fb 00 48 08 1b 00 48 01",
        ])
        #expect(hexLines(scene.peripheral.takeOutput()) == ["04 3e 0b 07 40 00 1b 00 48 01 fb 00 48 08"])
        #expect(scene.link.connections.first?.centralToPeripheralOctets == 251)
        #expect(hexLines(scene.central.receive(hostPacket: HCICommand.leSetDataLength(LESetDataLength(connectionHandle: 0x40)).packet))
            == ["04 0e 06 01 22 20 00 40 00"], "no change, no event")
        #expect(hexLines(scene.central.receive(hostPacket: HCICommand.leSetDataLength(LESetDataLength(connectionHandle: 0x40, txOctets: 10)).packet))
            == ["04 0e 06 01 22 20 12 40 00"])
    }

    @Test("a suggested default data length above 27 makes the controller update the data length when connecting")
    func suggestedDataLengthAppliesOnConnection() {
        let scene = AdvertisingScene()
        expectCommandComplete(scene.central, .leWriteSuggestedDefaultDataLength(LEWriteSuggestedDefaultDataLength()))
        expectCommandComplete(scene.peripheral, .leWriteSuggestedDefaultDataLength(LEWriteSuggestedDefaultDataLength()))
        #expect(scene.connectLegacy() == [centralConnectionComplete, channelSelection2, "04 3e 0b 07 40 00 fb 00 48 08 fb 00 48 08"])
        #expect(hexLines(scene.peripheral.takeOutput())
            == [peripheralConnectionComplete, channelSelection2, "04 3e 0b 07 40 00 fb 00 48 08 fb 00 48 08"])
    }

    @Test("LE Set PHY to 2M: PHY Update Complete on both sides, LE Read PHY agrees; without 2M support it stays 1M")
    func phyUpdate() {
        let scene = AdvertisingScene.connected()
        let setPHY = HCICommand.leSetPHY(LESetPHY(connectionHandle: 0x40, txPHYs: .le2M, rxPHYs: .le2M))
        #expect(hexLines(scene.central.receive(hostPacket: setPHY.packet)) == ["04 0f 04 00 01 32 20", "04 3e 06 0c 00 40 00 02 02"])
        #expect(hexLines(scene.peripheral.takeOutput()) == ["04 3e 06 0c 00 40 00 02 02"])
        #expect(hexLines(scene.peripheral.receive(hostPacket: HCICommand.leReadPHY(ConnectionHandleParameter(connectionHandle: 0x40)).packet))
            == ["04 0e 08 01 30 20 00 40 00 02 02"])

        // The peer cannot do 2M: the request is accepted, nothing changes, only the requesting host hears it.
        let oneMPeer = AdvertisingScene.connected(peripheral: { $0.leFeatures.remove(.le2MPHY) })
        #expect(hexLines(oneMPeer.central.receive(hostPacket: setPHY.packet)) == ["04 0f 04 00 01 32 20", "04 3e 06 0c 00 40 00 01 01"])
        #expect(oneMPeer.peripheral.takeOutput().isEmpty, "nothing changed for the peer")
        let allPHYs = HCICommand.leSetPHY(LESetPHY(connectionHandle: 0x40, allPHYs: 0x03, txPHYs: [], rxPHYs: []))
        #expect(hexLines(oneMPeer.central.receive(hostPacket: allPHYs.packet)) == ["04 0f 04 00 01 32 20", "04 3e 06 0c 00 40 00 01 01"])
        // A controller with neither 2M nor Coded does not have the PHY commands at all (Core Vol 4 Part E §3).
        #expect(hexLines(oneMPeer.peripheral.receive(hostPacket: setPHY.packet)) == ["04 0e 04 01 32 20 01"])
    }

    @Test("Read Remote Version Information and LE Read Remote Features return the peer's configuration")
    func remoteInformation() {
        let scene = AdvertisingScene.connected { $0.companyIdentifier = 0x0059 }
        #expect(hexLines(scene.central.receive(hostPacket: HCICommand.readRemoteVersionInformation(ConnectionHandleParameter(connectionHandle: 0x40)).packet))
            == ["04 0f 04 00 01 1d 04", "04 0c 08 00 40 00 0c 59 00 01 00"])
        #expect(hexLines(scene.peripheral.receive(hostPacket: HCICommand.leReadRemoteFeatures(ConnectionHandleParameter(connectionHandle: 0x40)).packet))
            == ["04 0f 04 00 01 16 20", "04 3e 0c 04 00 40 00 28 51 00 00 00 00 00 00"])
        #expect(hexLines(scene.central.receive(hostPacket: rawCommand(0x1405, [0x40, 0x00]))) == ["04 0e 07 01 05 14 00 40 00 ce"])

        let noPeripheralExchange = AdvertisingScene.connected { $0.leFeatures.remove(.peripheralInitiatedFeaturesExchange) }
        #expect(hexLines(noPeripheralExchange.peripheral.receive(hostPacket: HCICommand.leReadRemoteFeatures(
            ConnectionHandleParameter(connectionHandle: 0x40)).packet))
            == ["04 0f 04 00 01 16 20", "04 3e 0c 04 1a 40 00 00 00 00 00 00 00 00 00"])
    }

    @Test("a peer reset is noticed when the supervision timeout expires: Disconnection Complete, Connection Timeout")
    func peerResetTimesOut() {
        let scene = AdvertisingScene.connected()
        expectCommandComplete(scene.peripheral, .reset)
        #expect(scene.peripheral.connectionHandles.isEmpty)
        scene.link.clock.advance(by: .milliseconds(4_999))
        #expect(scene.central.takeOutput().isEmpty)
        #expect(scene.link.connections.first?.isLost == true)
        scene.link.clock.advance(by: .milliseconds(1))
        #expect(hexLines(scene.central.takeOutput()) == ["04 05 04 00 40 00 08"])
        #expect(scene.peripheral.takeOutput().isEmpty, "the reset side has forgotten the connection")
        #expect(scene.link.connections.isEmpty)
    }

    @Test("one peripheral serves two centrals; each connection has its own handles")
    func twoCentrals() {
        let scene = AdvertisingScene.connected()
        let second = scene.link.addController(publicAddress: VirtualAddress.thirdPublic)
        bringUpController(second, random: VirtualAddress.thirdRandom)
        scene.advertiseLegacy()
        let output = hexLines(second.receive(hostPacket: HCICommand.leCreateConnection(
            LECreateConnection(peerAddress: VirtualAddress.peripheralRandom)).packet))
        #expect(output == ["04 0f 04 00 01 0d 20", centralConnectionComplete, channelSelection2])
        #expect(hexLines(scene.peripheral.takeOutput()) == [
            "04 3e 13 01 00 41 00 01 01 03 00 00 00 00 c3 18 00 00 00 f4 01 00", "04 3e 04 14 41 00 01",
        ])
        #expect(scene.peripheral.connectionHandles == [0x40, 0x41])
    }
}
