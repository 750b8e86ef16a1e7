import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireSnoop
import BluewireTesting
import BluewireTransport
import Foundation
import Testing

/// A whole central session (bring-up, scan, connect, MTU exchange, GATT dump with long reads,
/// disconnect) that Bluewire recorded against a bumble peripheral, replayed with no bumble running:
/// `Captures/bumble_central_gatt_dump.btsnoop`.
@Suite("Central session replayed from a bumble capture")
struct ReplayCentralSessionTests {
    static let captureName = "bumble_central_gatt_dump.btsnoop"
    static let address = BluetoothAddress(parsing: "C4:5A:17:00:B1:0F/random")
    /// A small ATT MTU so that the long value needs Read Blob requests.
    static let mtu: UInt16 = 64

    /// What the bumble peripheral serves (`bumble_link.py --gatt`): the oracle for what the dump reads.
    static let longValue = (0..<150).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
    static let services: [(service: String, characteristics: [(uuid: String, properties: [String], value: [UInt8])])] = [
        ("180F", [("2A19", ["READ", "NOTIFY"], [0x64])]),
        ("6E400001-B5A3-F393-E0A9-E50E24DCCA9E", [
            ("6E400002-B5A3-F393-E0A9-E50E24DCCA9E", ["READ", "WRITE"], Array("Hello".utf8)),
            ("6E400003-B5A3-F393-E0A9-E50E24DCCA9E", ["READ"], longValue),
        ]),
    ]

    static var gattDescription: String {
        let services = Self.services.map { service in
            let characteristics = service.characteristics.map { c in
                "{\"uuid\": \"\(c.uuid)\", \"properties\": [\(c.properties.map { "\"\($0)\"" }.joined(separator: ", "))], \"value\": \"\(hexString(c.value))\"}"
            }
            return "{\"uuid\": \"\(service.service)\", \"characteristics\": [\(characteristics.joined(separator: ", "))]}"
        }
        return "{\"services\": [\(services.joined(separator: ", "))]}"
    }

    /// The session, the same live and replayed: the first advertiser found is the peer.
    static func session(_ host: BluetoothHost) async throws -> GATTDump {
        try await host.start()
        var peer: BluetoothAddress?
        for try await device in await host.scan(filter: AdvertisingFilter(namePrefix: "Replay")) {
            peer = device.address
            break
        }
        let connection = try await host.connect(to: try #require(peer))
        let gatt = await connection.gatt
        _ = try await gatt.exchangeMTU()
        let dump = try await gatt.dump()
        try await connection.disconnect()
        await host.close()
        return dump
    }

    static func replay(_ url: URL) async throws -> (GATTDump, ReplayTransport) {
        let (records, error) = CaptureReader.readAll(try [UInt8](Data(contentsOf: url)))
        if let error { throw error }
        let transport = ReplayTransport(script: ReplayScript(records: records), options: .init(strict: true))
        let host = BluetoothHost(
            transport: transport, configuration: HostConfiguration(randomAddress: address, preferredMTU: mtu, clearsControllerLeftoversAtStart: false),
            clock: TestClock())
        let dump = try await session(host)
        return (dump, transport)
    }

    /// Checks a dump against what the peripheral serves.
    static func expectServed(_ dump: GATTDump) {
        for service in services {
            for characteristic in service.characteristics {
                let uuid = BluetoothUUID(parsing: characteristic.uuid)
                let handle = dump.attributes.first { $0.type == uuid && $0.properties != nil }?.handle
                #expect(handle.flatMap { dump.values[$0] } == characteristic.value, "value of \(characteristic.uuid)")
            }
        }
    }

    @Test("the recorded session replays byte-exactly and its dump reads what the peripheral served")
    func sessionReplaysStrictly() async throws {
        let (dump, transport) = try await Self.replay(ReplayFixtures.captures.appendingPathComponent(Self.captureName))
        try await transport.verify()
        #expect(await transport.isExhausted)
        Self.expectServed(dump)
    }

    @Test("two replays of the session produce the same dump")
    func sessionIsDeterministic() async throws {
        let url = ReplayFixtures.captures.appendingPathComponent(Self.captureName)
        let (first, _) = try await Self.replay(url)
        let (second, _) = try await Self.replay(url)
        #expect(first == second)
    }

    @Test("a session recorded live against a bumble peripheral replays strictly with the same dump",
          .enabled(if: BumbleController.python != nil))
    func recordThenReplay() async throws {
        let update = ProcessInfo.processInfo.environment["BLUEWIRE_UPDATE_CAPTURES"] != nil
        let url = update ? ReplayFixtures.captures.appendingPathComponent(Self.captureName)
            : FileManager.default.temporaryDirectory.appendingPathComponent("bluewire-central-\(UUID().uuidString).btsnoop")
        let gattFile = FileManager.default.temporaryDirectory.appendingPathComponent("bluewire-gatt-\(UUID().uuidString).json")
        try Self.gattDescription.write(to: gattFile, atomically: true, encoding: .utf8)
        defer {
            if !update { try? FileManager.default.removeItem(at: url) }
            try? FileManager.default.removeItem(at: gattFile)
        }
        let bumble = try BumbleController.start(arguments: ["--peripheral", "--name", "Replay peripheral", "--gatt", gattFile.path])
        defer { bumble.stop() }
        let live = try CaptureTap(wrapping: try await TransportSpec(parsing: bumble.transport).open(), path: url.path)
        let host = BluetoothHost(transport: live, configuration: HostConfiguration(randomAddress: Self.address, preferredMTU: Self.mtu, clearsControllerLeftoversAtStart: false))
        let recorded = try await Self.session(host)
        Self.expectServed(recorded)

        let (replayed, transport) = try await Self.replay(url)
        try await transport.verify()
        #expect(replayed == recorded)
    }
}
