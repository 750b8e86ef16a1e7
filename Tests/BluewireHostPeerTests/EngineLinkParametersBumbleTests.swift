import Bluewire
import BluewireTransport
import Foundation
import PeerTestSupport
import Testing

/// `EngineConnection.updateParameters` and `setDataLength` (LE Connection Update, LE Set Data Length;
/// Core Vol 4 Part E §7.8.18, §7.8.33) to bumble's controller and peripheral
/// (Tests/Peers/bumble_link.py --peripheral); between two EngineHosts on the virtual link:
/// `EngineLinkParametersTests`.
@Suite("EngineConnection: link parameters against bumble", .serialized)
struct EngineLinkParametersBumbleTests {
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
}
