import Bluewire
import BluewireCore
import BluewireGATT
import BluewireTransport
import Foundation
import PeerTestSupport
import Testing

/// `EngineGATTClient`'s step-by-step discovery, reads by UUID and Read Multiple, long writes at an
/// offset and reliable writes, each one engine request, against bumble's GATT server (a server nobody
/// here wrote) on a fresh link per test. Every result is checked against the attribute table bumble
/// reports, or against the writes it reports.
@Suite("EngineGATTClient procedures against a bumble peripheral")
struct EngineGATTClientInteropTests {
    static let battery = BluetoothUUID(0xFFA0)
    static let level = BluetoothUUID(0xFFA1)
    static let notes = BluetoothUUID(0xFFA2)
    static let device = BluetoothUUID(0xFFB0)
    static let fixed = BluetoothUUID(0xFFB1)

    /// Battery 0xFFA0 (Level 0xFFA1 read/write, Notes 0xFFA2 read/write/notify), then Device 0xFFB0,
    /// which includes Battery, with a Level 0xFFA1 of its own and Fixed 0xFFB1 (read only).
    static let json = """
        {"services": [
          {"uuid": "FFA0", "characteristics": [
            {"uuid": "FFA1", "properties": ["READ", "WRITE"], "value": "010203"},
            {"uuid": "FFA2", "properties": ["READ", "WRITE", "NOTIFY"], "value": "0405"}]},
          {"uuid": "FFB0", "includes": [0], "characteristics": [
            {"uuid": "FFA1", "properties": ["READ"], "value": "09", "permissions": "READABLE"},
            {"uuid": "FFB1", "properties": ["READ"], "value": "f0", "permissions": "READABLE"}]}]}
        """

    struct Session {
        let host: EngineHost
        let gatt: EngineGATTClient
        let events: BumbleEventLog
        let database: [BumbleAttribute]

        /// Bumble's value handles of the characteristics of type `uuid`, in handle order.
        func valueHandles(of uuid: BluetoothUUID) -> [UInt16] {
            let type = uuid.attBytes.map { String(format: "%02x", $0) }.joined()
            return database.filter { $0.type == type }.map(\.handle)
        }

        /// Runs `body`, returning its result and the engine requests it took.
        func counting<R>(_ body: () async throws -> R) async rethrows -> (R, UInt32) {
            let before = await host.requestsPerformed
            let result = try await body()
            return (result, await host.requestsPerformed &- before)
        }
    }

    /// Bumble serving `json`, an `EngineHost` connected to it, then `body`.
    static func withPeer(_ body: (Session) async throws -> Void) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("engine-gatt-\(UUID().uuidString.prefix(8)).json")
        try Data(json.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--interval", "50", "--gatt", file.path]) { peer in
            let events = BumbleEventLog(peer.events)
            let table = try #require(await events.first { $0["database"] != nil }?["database"], "bumble reports its attribute table")
            let database = try JSONDecoder().decode([BumbleAttribute].self, from: JSONSerialization.data(withJSONObject: table))
            let transport = try await TransportSpec(parsing: peer.transports[0]).open()
            let host = EngineHost(transport: transport, configuration: HostEngineConfiguration(randomAddress: .randomStatic(0x0A7A_7E00_0A11)))
            do {
                _ = try await host.perform(.start).get()
                let address = try #require(peer.ready.device.flatMap { BluetoothAddress(parsing: $0.address + "/random") })
                let connection = try await host.connect(to: address)
                try await body(Session(host: host, gatt: await connection.gatt, events: events, database: database))
            } catch {
                await host.close()
                throw error
            }
            await host.close()
        }
    }

    @Test("discovery step by step: services by UUID, the include, characteristics (all, by UUID), descriptors; one engine request each")
    func discovery() async throws {
        try await Self.withPeer { session in
            let gatt = session.gatt
            let (services, servicesRequests) = try await session.counting { try await gatt.discoverServices(uuid: Self.device) }
            #expect(servicesRequests == 1)
            let device = try #require(services.first)
            #expect(services.count == 1 && device.uuid == Self.device)
            let (all, _) = try await session.counting { try await gatt.discoverServices() }
            let battery = try #require(all.first { $0.uuid == Self.battery })
            #expect(all.contains(device))

            let (includes, includeRequests) = try await session.counting { try await gatt.includedServices(of: device) }
            #expect(includeRequests == 1)
            #expect(includes.map(\.serviceHandle) == [battery.handle] && includes.map(\.uuid) == [Self.battery], "\(includes)")

            let (characteristics, characteristicRequests) = try await session.counting { try await gatt.discoverCharacteristics(of: battery) }
            #expect(characteristicRequests == 1)
            #expect(characteristics.map(\.uuid) == [Self.level, Self.notes])
            #expect(characteristics.map(\.valueHandle) == session.valueHandles(of: Self.level).prefix(1) + session.valueHandles(of: Self.notes))
            let (fixed, _) = try await session.counting { try await gatt.discoverCharacteristics(of: device, uuid: Self.fixed) }
            #expect(fixed.map(\.valueHandle) == session.valueHandles(of: Self.fixed))

            let notes = try #require(characteristics.last)
            let (descriptors, descriptorRequests) = try await session.counting { try await gatt.discoverDescriptors(of: notes) }
            #expect(descriptorRequests == 1)
            #expect(descriptors.map(\.uuid) == [.clientCharacteristicConfiguration])
            #expect(try await gatt.read(notes) == [0x04, 0x05], "a characteristic found this way reads")
        }
    }

    @Test("Read Using Characteristic UUID over a range, Read Multiple Variable Length and Read Multiple: bumble's values, one engine request each")
    func reads() async throws {
        try await Self.withPeer { session in
            let gatt = session.gatt
            _ = try await gatt.discoverAll()
            let levels = session.valueHandles(of: Self.level)
            let fixed = try #require(session.valueHandles(of: Self.fixed).first)
            #expect(levels.count == 2)
            let (values, requests) = try await session.counting { try await gatt.read(uuid: Self.level) }
            #expect(requests == 1)
            #expect(values == zip(levels, [[0x01, 0x02, 0x03], [0x09]]).map { GATTHandleValue(handle: $0, value: $1) })
            let device = try #require(gatt.cache.services.first { $0.uuid == Self.device })
            #expect(try await gatt.read(uuid: Self.level, startingHandle: device.handle, endingHandle: device.endHandle).map(\.value) == [[0x09]])

            let (variable, variableRequests) = try await session.counting { try await gatt.readMultipleVariable(handles: [levels[0], fixed, levels[1]]) }
            #expect(variableRequests == 1)
            #expect(variable == [[0x01, 0x02, 0x03], [0xF0], [0x09]])
            let (joined, joinedRequests) = try await session.counting { try await gatt.readMultipleConcatenated(handles: [fixed, levels[0]]) }
            #expect(joinedRequests == 1)
            #expect(joined == [0xF0, 0x01, 0x02, 0x03])
        }
    }

    @Test("reliable writes reach bumble together (one engine request); a refused part cancels them; a long write at an offset gets bumble's typed refusal")
    func writes() async throws {
        try await Self.withPeer { session in
            let gatt = session.gatt
            _ = try await gatt.discoverAll()
            let level = try #require(session.valueHandles(of: Self.level).first)
            let notes = try #require(session.valueHandles(of: Self.notes).first)
            let long = (0..<30).map { UInt8($0 &* 7) }
            let ((), requests) = try await session.counting { try await gatt.reliableWrite([(level, long), (notes, [0xAB])]) }
            #expect(requests == 1)
            #expect(await session.events.first { $0["write"] as? Int == Int(notes) && $0["value"] as? String == "ab" } != nil)
            #expect(try await gatt.readLong(handle: level) == long, "the 30 octets went as two Prepare Writes, then one Execute Write")

            // A part for a handle bumble does not have: Invalid Handle, and the queue is cancelled, so
            // Notes keeps its value.
            await #expect(throws: GATTError.procedure(.errorResponse(.invalidHandle, requestOpcode: .prepareWriteRequest, handle: 0x0F00))) {
                try await gatt.reliableWrite([(notes, [0xCD]), (0x0F00, [0x01])])
            }
            #expect(try await gatt.read(handle: notes) == [0xAB])
            #expect(!session.events.events.contains { $0["value"] as? String == "cd" })

            // bumble 0.0.236 rebuilds each value from its prepared parts alone (gatt_server.py, Execute
            // Write), so a first part at offset 4 leaves a gap: it refuses the Execute Write with Invalid
            // Offset after echoing the Prepare Write. The engine's own server takes it (EngineGATTClientProcedureTests).
            let ((), offsetRequests) = await session.counting {
                await #expect(throws: GATTError.procedure(.errorResponse(.invalidOffset, requestOpcode: .executeWriteRequest, handle: level))) {
                    try await gatt.writeLong([0xEE, 0xEE], to: level, offset: 4)
                }
            }
            #expect(offsetRequests == 1)
            #expect(try await gatt.readLong(handle: level) == long)
        }
    }
}
