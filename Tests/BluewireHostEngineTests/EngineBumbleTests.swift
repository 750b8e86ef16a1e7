import BluewireCore
import BluewireGATT
import BluewireHostEngine
import Foundation
import PeerTestSupport
import Testing

/// The engine as a peripheral on a real bumble controller over TCP, served to a bumble central
/// that connects, exchanges MTU, discovers, reads and subscribes.
@Suite("Host engine on a bumble controller")
struct EngineBumbleTests {
    @Test("a bumble central discovers, reads and subscribes; the engine notifies, then readvertises after the disconnection")
    func servesBumbleCentral() async throws {
        let address = BluetoothAddress(value: 0xC3_5E_17_00_E1_01, type: .random)
        try await withBumblePeer([.tcp], arguments: ["--central", address.hexString, "--manual"]) { peer in
            let log = PeerEventLog()
            let lines = peer.events
            let collector = Task { for await line in lines { log.append(line) } }
            defer { collector.cancel() }
            let runner = try SocketEngineRunner(
                transport: peer.transports[0], configuration: HostEngineConfiguration(randomAddress: address))

            runner.perform(.start, id: 1)
            #expect(runner.run(seconds: 10) { $0.result(1) != nil })
            guard case .success(.started)? = runner.result(1) else {
                Issue.record("bring-up: \(String(describing: runner.result(1)))")
                return
            }
            runner.engine.setDatabase(try TestDatabase.make())
            runner.perform(.startAdvertising(.named("engine", services: [TestDatabase.service])), id: 2)
            #expect(runner.run(seconds: 10) { $0.result(2) != nil })
            #expect(runner.result(2) == .success(.done))

            peer.send(line: #"{"central": 0, "op": "connect", "mtu": 100}"#)
            let subscribed = runner.run(seconds: 20) { runner in
                runner.events.contains {
                    if case .server(.subscriptionChanged(let s)) = $0 { return s.notifications }
                    return false
                }
            }
            #expect(subscribed, "peer events: \(log.all)")
            #expect(runner.events.contains(.mtuChanged(connection: runner.engine.connectionHandles.first ?? 0, mtu: 100)))
            runner.perform(.notify(valueHandle: TestDatabase.valueHandle, value: [0xAB, 0xCD], connection: nil), id: 3)
            #expect(runner.run(seconds: 10) { _ in log.first("notification") != nil && log.first("discovered") != nil })

            let values = log.all.filter { $0["characteristic"] != nil }
            let short = values.first { ($0["handle"] as? Int) == Int(TestDatabase.valueHandle) }
            let long = values.first { ($0["handle"] as? Int) == Int(TestDatabase.longHandle) }
            #expect(short?["value"] as? String == "2a", "\(values)")
            #expect(long?["value"] as? String == TestDatabase.longValue.map { String(format: "%02x", $0) }.joined(), "\(values)")
            #expect(log.first("mtu")?["mtu"] as? Int == 100)
            #expect(log.first("notification")?["value"] as? String == "abcd")
            guard case .success(.notified(let to))? = runner.result(3) else {
                Issue.record("notify: \(String(describing: runner.result(3)))")
                return
            }
            #expect(to.count == 1)

            // The central disconnects: the engine reports it and advertises again.
            let before = runner.events.filter { $0 == .advertisingStarted }.count
            peer.send(line: #"{"central": 0, "op": "disconnect"}"#)
            #expect(runner.run(seconds: 10) { runner in runner.events.filter { $0 == .advertisingStarted }.count > before })
            #expect(runner.events.contains { if case .disconnected = $0 { return true }; return false })
            #expect(runner.engine.isAdvertising)
            print("engine over bumble: \(runner.packetsIn) packets in, \(runner.packetsOut) out")
        }
    }
}
