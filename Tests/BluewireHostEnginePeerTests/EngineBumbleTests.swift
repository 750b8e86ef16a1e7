import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import Foundation
import HostTestSupport
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

/// The engine as a central on a bumble controller: scan for a bumble peripheral, connect,
/// exchange MTU, discover, read, subscribe and receive its counter notifications.
@Suite("Host engine as a central on a bumble controller")
struct EngineBumbleCentralTests {
    @Test("scan, connect, discover, read, subscribe to a bumble peripheral, then disconnect")
    func centralSession() async throws {
        let gatt = FileManager.default.temporaryDirectory.appendingPathComponent("engine-central-\(UUID().uuidString.prefix(8)).json")
        try Data(#"""
        {"services": [{"uuid": "FFF0", "characteristics": [
          {"uuid": "FFF1", "properties": ["READ"], "value": "cafe"},
          {"uuid": "FFF3", "properties": ["READ", "NOTIFY"], "value": "00000000", "counter": 5}]}]}
        """#.utf8).write(to: gatt)
        defer { try? FileManager.default.removeItem(at: gatt) }
        let address = BluetoothAddress(value: 0xC3_5E_17_00_E1_02, type: .random)
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--name", "bumble-engine", "--uuid16", "FFF0", "--gatt", gatt.path, "--interval", "50"]) { peer in
            let log = PeerEventLog()
            let lines = peer.events
            let collector = Task { for await line in lines { log.append(line) } }
            defer { collector.cancel() }
            let peripheral = try #require(peer.ready.device.flatMap { BluetoothAddress(parsing: $0.address + "/random") })
            let runner = try SocketEngineRunner(
                transport: peer.transports[0], configuration: HostEngineConfiguration(randomAddress: address))
            runner.perform(.start, id: 1)
            #expect(runner.run(seconds: 10) { $0.result(1) != nil })

            runner.perform(.startScan(ScanParameters(), filter: AdvertisingFilter(serviceUUIDs: [BluetoothUUID(0xFFF0)])), id: 2)
            let found = runner.run(seconds: 15) { runner in
                runner.events.contains { if case .deviceFound(let d) = $0 { return d.address == peripheral }; return false }
            }
            #expect(found, "no advertising report from \(peripheral)")
            runner.perform(.stopScan, id: 3)
            runner.perform(.connect(peripheral, LEConnectionParameters()), id: 4)
            #expect(runner.run(seconds: 15) { $0.result(4) != nil })
            guard case .success(.connected(let connection))? = runner.result(4) else {
                Issue.record("connect: \(String(describing: runner.result(4)))")
                return
            }
            #expect(runner.result(3) == .success(.done))
            #expect(!runner.engine.isScanning)

            runner.perform(.gatt(connection: connection.handle, .exchangeMTU), id: 5)
            runner.perform(.gatt(connection: connection.handle, .discoverAll), id: 6)
            #expect(runner.run(seconds: 10) { $0.result(6) != nil })
            guard case .success(.mtu(let mtu))? = runner.result(5), case .success(.services(let services))? = runner.result(6) else {
                Issue.record("mtu \(String(describing: runner.result(5))), discover \(String(describing: runner.result(6)))")
                return
            }
            #expect(mtu > 23)
            let service = try #require(services.first { $0.service.uuid == BluetoothUUID(0xFFF0) })
            let plain = try #require(service.characteristics.first { $0.characteristic.uuid == BluetoothUUID(0xFFF1) })
            let counter = try #require(service.characteristics.first { $0.characteristic.uuid == BluetoothUUID(0xFFF3) })
            #expect(counter.clientConfigurationHandle != nil)

            runner.perform(.gatt(connection: connection.handle, .read(handle: plain.characteristic.valueHandle)), id: 7)
            runner.perform(.gatt(connection: connection.handle, .subscribe(
                counter.characteristic, indications: false, descriptorHandle: counter.clientConfigurationHandle)), id: 8)
            let notified = runner.run(seconds: 10) { runner in
                runner.events.filter { if case .notification = $0 { return true }; return false }.count >= 5
            }
            #expect(notified)
            #expect(runner.result(7) == .success(.value([0xCA, 0xFE])))
            #expect(runner.result(8) == .success(.configured(descriptorHandle: counter.clientConfigurationHandle ?? 0)))
            let values: [[UInt8]] = runner.events.compactMap {
                if case .notification(_, let attribute, let value, false) = $0, attribute == counter.characteristic.valueHandle { return Array(value) }
                return nil
            }
            #expect(values == (0..<5).map { [UInt8($0), 0, 0, 0] })

            runner.perform(.disconnect(handle: connection.handle, reason: .remoteUserTerminatedConnection), id: 9)
            #expect(runner.run(seconds: 10) { $0.result(9) != nil })
            // bumble's controller reports back the reason the host gave (§7.1.6 has the initiator's
            // controller report Connection Terminated By Local Host, 0x16).
            #expect(runner.result(9) == .success(.disconnected(.remoteUserTerminatedConnection)))
            #expect(runner.engine.connectionHandles.isEmpty)
            print("engine central over bumble: \(runner.packetsIn) packets in, \(runner.packetsOut) out")
        }
    }
}
