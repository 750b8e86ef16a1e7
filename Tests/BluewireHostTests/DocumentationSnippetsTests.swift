import Bluewire
// Only the umbrella import: the articles say `import Bluewire` is enough (Sources/Bluewire/Exports.swift).
import BluewireTesting
import Foundation
import Testing

/// The code of the DocC articles (Sources/Bluewire/Bluewire.docc), compiled here so that an API change
/// that breaks an article breaks the build. Keep each function identical to its article's snippets.
/// The live ones need a controller and are only compiled; the replay one runs.
enum DocumentationSnippets {
    /// GettingStarted.md
    static func gettingStarted() async throws {
        let transport = try await TransportSpec(parsing: "tcp:127.0.0.1:9001").open()
        let host = EngineHost(transport: transport,
                              configuration: HostEngineConfiguration(randomAddress: .randomStatic(0x0000_C0FF_EE01)))
        await host.configureSecurity(HostSecurityConfiguration(
            pairing: PairingConfiguration(ioCapability: .noInputNoOutput), crypto: SMPCrypto(SwiftCryptoSMP())))
        let controller = try await host.start()
        print("HCI version", controller.version.hciVersion, "ACL", controller.leACLDataPacketLength)

        let heartRate = BluetoothUUID(0x180D)
        var peer: BluetoothAddress?
        for try await device in await host.scan(filter: AdvertisingFilter(serviceUUIDs: [heartRate]),
                                                duration: .seconds(10)) {
            print(device.address, device.name ?? "-", device.rssi)
            peer = device.address
            break
        }

        guard let peer else { return }
        let connection = try await host.connect(to: peer, timeout: .seconds(10))
        let level = try await connection.pair()
        print("paired:", level)
        let gatt = await connection.gatt
        _ = try await gatt.exchangeMTU()
        let database = try await gatt.discoverAll()
        let characteristics = database.filter { $0.service.uuid == heartRate }.flatMap(\.characteristics).map(\.characteristic)

        if let location = characteristics.first(where: { $0.uuid == BluetoothUUID(0x2A38) }) {
            let value = try await gatt.read(location)             // Read Request, Read Blobs while parts come back full
            print("body sensor location:", value)
        }
        if let control = characteristics.first(where: { $0.uuid == BluetoothUUID(0x2A39) }) {
            try await gatt.write([0x01], to: control)             // Write Request, waits for the response
        }

        if let measurement = characteristics.first(where: { $0.uuid == BluetoothUUID(0x2A37) }) {
            let values = try await gatt.subscribe(to: measurement)
            var received = 0
            for try await notification in values {
                print("heart rate:", Array(notification.value))
                received += 1
                if received == 5 { break }
            }
            try await gatt.unsubscribe(values)
        }

        let channel = try await connection.openChannel(psm: SPSM(rawValue: 0x0080))
        try await channel.send(Array("hello".utf8))
        for try await sdu in channel.sdus {
            print("received", sdu.count, "octets")
            break
        }
        await channel.close()
        _ = try await connection.disconnect()
        await host.close()
    }

    /// ServingADatabase.md
    static func servingADatabase() async throws {
        var builder = GATTDatabaseBuilder()
        try builder.addService(BluetoothUUID(0x1809))                         // Health Thermometer
        let temperature = try builder.addCharacteristic(
            BluetoothUUID(0x2A1C), properties: [.read, .indicate], permissions: [.read],
            value: .cached([0x00, 0x24, 0x01, 0x00, 0xFF]))
        let database = builder.build()

        let host = BluetoothHost(transport: try await TransportSpec(parsing: "tcp:127.0.0.1:9001").open())
        try await host.start()
        await host.setDatabase(database)
        try await host.startAdvertising(try Advertisement(name: "Thermometer", services: [BluetoothUUID(0x1809)]))

        for await event in await host.peripheralEvents() {
            switch event {
            case .connected(let connection):
                print("connected", connection.peer)
            case .subscriptionChanged(let subscription) where subscription.indications:
                // The central that subscribed, while its link is up.
                if let central = await host.connection(handle: subscription.connection) {
                    _ = try await host.indicate(temperature.valueHandle, value: [0x00, 0x25, 0x01, 0x00, 0xFF], to: central)
                }
            case .disconnected(_, let peer, let reason):
                print("disconnected", peer, reason)
            default:
                break
            }
        }
    }

    /// ReplayingACapture.md, "Record"
    static func record() async throws {
        let live = try await TransportSpec(parsing: "tcp:127.0.0.1:9001").open()
        let recording = try CaptureTap(wrapping: live, path: "bringup.btsnoop")
        let host = BluetoothHost(transport: recording)
        try await host.start()
        await host.close()
    }

    /// MeasuringThroughput.md
    static func measuringThroughput(peripheralAddress: BluetoothAddress) async throws {
        let peer = try ThroughputPeer()
        let peripheral = BluetoothHost(transport: try await TransportSpec(parsing: "tcp:127.0.0.1:9001").open())
        try await peripheral.start()
        await peripheral.setDatabase(peer.database)
        try await peripheral.startAdvertising(try Advertisement(name: "Bluewire Throughput",
                                                                services: [ThroughputProfile.service]))
        let events = await peripheral.peripheralEvents()
        Task { await peer.serve(on: peripheral, events: events) }

        let central = BluetoothHost(transport: try await TransportSpec(parsing: "tcp:127.0.0.1:9002").open())
        try await central.start()
        let connection = try await central.connect(to: peripheralAddress)
        let report = try await ThroughputClient(connection: connection).run(
            ThroughputOptions(mode: .notify, duration: .seconds(5))) { progress in
                print(progress.elapsed, progress.kilobitsPerSecond, "kbit/s")
            }
        print(report.kilobitsPerSecond, "kbit/s,", report.packets, "packets,", report.lost ?? 0, "lost")
    }

    /// MeasuringThroughput.md, "On the engine host"
    static func measuringThroughputOnTheEngine(peripheralAddress: BluetoothAddress, centralAddress: BluetoothAddress) async throws {
        let peer = try ThroughputPeer()
        let peripheral = EngineHost(transport: try await TransportSpec(parsing: "tcp:127.0.0.1:9001").open(),
                                    configuration: HostEngineConfiguration(randomAddress: peripheralAddress))
        await peripheral.setDatabase(peer.database)
        let events = await peripheral.events()
        _ = try await peripheral.perform(.start).get()
        _ = try await peripheral.perform(.startAdvertising(.named("Bluewire Throughput", services: [ThroughputProfile.service]))).get()
        Task { await peer.serve(on: peripheral, events: events) }

        let central = EngineHost(transport: try await TransportSpec(parsing: "tcp:127.0.0.1:9002").open(),
                                 configuration: HostEngineConfiguration(randomAddress: centralAddress))
        _ = try await central.perform(.start).get()
        let connection = try await central.connect(to: peripheralAddress)
        let report = try await EngineThroughputClient(connection: connection).run(
            ThroughputOptions(mode: .writeWithoutResponse, duration: .seconds(5)))
        print(report.kilobitsPerSecond, "kbit/s,", report.sent ?? 0, "sent,", report.lost ?? 0, "lost")
    }
}

@Suite("Documentation: article snippets and shipped example files")
struct DocumentationSnippetsTests {
    /// ReplayingACapture.md, "Replay in a test", with the capture path made absolute.
    @Test("the replay article's test replays Captures/bumble_host_bringup.btsnoop strictly")
    func bringUpReplays() async throws {
        let path = ReplayFixtures.captures.appendingPathComponent("bumble_host_bringup.btsnoop").path
        let transport = try ReplayTransport(capturePath: path,
                                            options: .init(strict: true))
        let host = BluetoothHost(
            transport: transport,
            configuration: HostConfiguration(randomAddress: BluetoothAddress(parsing: "C4:5A:17:00:B1:0E/random")),
            clock: TestClock())
        let controller = try await host.start()
        await host.close()
        try await transport.verify()
        #expect(controller.leACLDataPacketLength == 27)
    }

    /// The database file README's `bluewire serve --db Examples/device.json` names.
    @Test("Examples/device.json loads: 12 attributes, the Device Name and a long descriptor README's session reads")
    func exampleDatabaseLoads() throws {
        let url = ReplayFixtures.captures.deletingLastPathComponent()
            .appendingPathComponent("Examples").appendingPathComponent("device.json")
        let database = try GATTDatabase(jsonBytes: Array(try Data(contentsOf: url))[...])
        #expect(database.attributes.count == 12)
        #expect(database[handle: 3]?.cachedValue == Array("Thermometer".utf8))
        #expect(database[handle: 9]?.cachedValue.map { Array($0.dropFirst(22)) } == Array("s more".utf8))
        #expect(database[handle: 12]?.type == BluetoothUUID(0x2902))
    }
}
