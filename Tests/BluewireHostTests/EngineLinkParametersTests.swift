import Bluewire
import BluewireTesting
import BluewireTransport
import Foundation
import PeerTestSupport
import Testing

/// `EngineConnection.updateParameters` and `setDataLength` (LE Connection Update, LE Set Data Length;
/// Core Vol 4 Part E §7.8.18, §7.8.33) on live links: to bumble's controller and peripheral
/// (Tests/Peers/bumble_link.py --peripheral), and between two EngineHosts on the virtual link, whose
/// controller model runs the data length update procedure that bumble's lacks.
@Suite("EngineConnection: link parameters", .serialized)
struct EngineLinkParametersTests {
    /// The first `.dataLengthChanged` on `handle` whose lengths `matching` accepts.
    static func dataLengthChange(
        _ events: AsyncStream<HostEngineEvent>, handle: UInt16, _ matching: (UInt16, UInt16, UInt16, UInt16) -> Bool
    ) async -> [UInt16]? {
        for await event in events {
            if case .dataLengthChanged(handle, let txOctets, let txTime, let rxOctets, let rxTime) = event,
               matching(txOctets, txTime, rxOctets, rxTime) {
                return [txOctets, txTime, rxOctets, rxTime]
            }
        }
        return nil
    }

    @Test("bumble: a connection update completes with the parameters bumble's peripheral reports too; LE Set Data Length is refused as bumble does (0x01)")
    func bumble() async throws {
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--name", "bumble-params"]) { peer in
            let peerEvents = CocPeerEvents(peer)
            let transport = try await TransportSpec(parsing: peer.transports[0]).open()
            let host = EngineHost(transport: transport, configuration: HostEngineConfiguration(randomAddress: .randomStatic(0x0A7A_7E00_0002)))
            _ = try await host.perform(.start).get()
            let address = try #require(peer.ready.device.flatMap { BluetoothAddress(parsing: $0.address + "/random") })
            let events = await host.events()
            let connection = try await host.connect(to: address)

            // bumble's controller takes Connection_Interval_Max (Core Vol 4 Part E §7.8.18 lets it pick
            // within the bounds) and the latency and timeout as asked.
            let asked = LEConnectionParameters(connectionIntervalMin: 0x0010, connectionIntervalMax: 0x0020, maxLatency: 3, supervisionTimeout: 0x0190)
            let now = try await connection.updateParameters(asked)
            #expect(now == HostConnectionParameters(interval: 0x0020, latency: 3, supervisionTimeout: 0x0190))
            #expect(await host.link(connection.handle)?.interval == 0x0020)
            let seen = await peerEvents.wait { $0["parameters_updated"] != nil && $0["interval"] as? Int == 0x20 }
            #expect(seen?["latency"] as? Int == 3 && seen?["timeout"] as? Int == 0x190, "bumble's peripheral saw \(String(describing: seen))")
            var updated: HostEngineEvent?
            for await event in events {
                if case .connectionUpdated = event { updated = event; break }
            }
            #expect(updated == .connectionUpdated(handle: connection.handle, interval: 0x0020, latency: 3, timeout: 0x0190))

            // bumble 0.0.236's controller has no LE Set Data Length: Command Complete with Unknown HCI Command.
            do throws(HostEngineError) {
                try await connection.setDataLength(txOctets: 251, txTime: 2120)
                Issue.record("bumble's controller accepted LE Set Data Length")
            } catch {
                #expect(error == .command(.failed(.leSetDataLength, .unknownHCICommand)))
            }
            // Refused before anything is sent: 100 ms is not more than 50 ms × 2.
            await #expect(throws: HostEngineError.linkParameters(.supervisionTimeoutTooShort(timeout: 10, latency: 0, intervalMax: 0x28))) {
                _ = try await connection.updateParameters(LEConnectionParameters(
                    connectionIntervalMin: 0x10, connectionIntervalMax: 0x28, maxLatency: 0, supervisionTimeout: 10))
            }
            // The link still updates after both refusals.
            let again = try await connection.updateParameters(LEConnectionParameters(
                connectionIntervalMin: 0x0006, connectionIntervalMax: 0x0008, maxLatency: 0, supervisionTimeout: 0x0064))
            #expect(again == HostConnectionParameters(interval: 0x0008, latency: 0, supervisionTimeout: 0x0064))
            #expect(await peerEvents.wait { $0["parameters_updated"] != nil && $0["interval"] as? Int == 0x08 } != nil)

            _ = try await connection.disconnect()
            await #expect(throws: HostEngineError.unknownConnection(connection.handle)) {
                _ = try await connection.updateParameters(asked)
            }
            await host.close()
        }
    }

    @Test("virtual link: LE Set Data Length gives LE Data Length Change on both hosts; a connection update completes with the controller's choice")
    func virtualLink() async throws {
        let clock = TestClock()
        let link = VirtualLink(clock: clock, timing: .immediate)
        let central = EngineHost(
            transport: VirtualTransport(controller: link.addController(publicAddress: VirtualAddress.centralPublic)),
            configuration: HostEngineConfiguration(randomAddress: .randomStatic(0x0A0B_0C0D_0E11)), clock: clock)
        let peripheralAddress = BluetoothAddress.randomStatic(0x0A0B_0C0D_0E12)
        let peripheral = EngineHost(
            transport: VirtualTransport(controller: link.addController(publicAddress: VirtualAddress.peripheralPublic)),
            configuration: HostEngineConfiguration(randomAddress: peripheralAddress), clock: clock)
        _ = try await central.perform(.start).get()
        _ = try await peripheral.perform(.start).get()
        _ = try await peripheral.perform(.startAdvertising(.named("Params"))).get()
        let centralEvents = await central.events()
        let peripheralEvents = await peripheral.events()
        let connection = try await central.connect(to: peripheralAddress)

        try await connection.setDataLength(txOctets: 100, txTime: 912)
        // The controller model's air time for 100 octets on LE 1M: (100 + 14) × 8 µs.
        let ours = await Self.dataLengthChange(centralEvents, handle: connection.handle) { tx, _, _, _ in tx == 100 }
        #expect(ours?.prefix(2) == [100, 912])
        let theirs = await Self.dataLengthChange(peripheralEvents, handle: connection.handle) { _, _, rx, _ in rx == 100 }
        #expect(theirs?.suffix(2) == [100, 912], "the peripheral receives 100-octet packets now")

        // This controller model takes Connection_Interval_Min.
        let now = try await connection.updateParameters(LEConnectionParameters(
            connectionIntervalMin: 0x0020, connectionIntervalMax: 0x0030, maxLatency: 1, supervisionTimeout: 0x0200))
        #expect(now == HostConnectionParameters(interval: 0x0020, latency: 1, supervisionTimeout: 0x0200))
        await #expect(throws: HostEngineError.linkParameters(.txOctets(252))) {
            try await connection.setDataLength(txOctets: 252, txTime: 2120)
        }
        _ = try await connection.disconnect()
        await central.close()
        await peripheral.close()
    }
}
