import Bluewire
import BluewireTransport
import Foundation
import PeerTestSupport
import Testing

/// `EngineConnection` as an `ATTRequestPerformer`: a `GATTOperationQueue` over an engine link runs the
/// ready-made `GATTOperations` against bumble's GATT server (Tests/Peers/bumble_link.py --peripheral
/// --gatt), and every result is checked against what bumble serves or reports.
@Suite("EngineConnection as an ATTRequestPerformer against bumble", .serialized)
struct EngineATTPerformerBumbleTests {
    static let longValue = (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 3) }
    static let gatt = """
        {"services": [{"uuid": "FFF0", "characteristics": [
          {"uuid": "FFF1", "properties": ["READ", "WRITE", "WRITE_WITHOUT_RESPONSE"], "value": "cafe"},
          {"uuid": "FFF2", "properties": ["READ", "WRITE"], "value": "\(longValue.map { String(format: "%02x", $0) }.joined())"},
          {"uuid": "FFF3", "properties": ["READ", "NOTIFY"], "value": "00000000", "counter": 5},
          {"uuid": "FFF4", "properties": ["READ", "INDICATE"], "value": "00000000", "counter": 3}]}]}
        """

    struct Failure: Error, CustomStringConvertible { var description: String }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// Collects `count` values from `stream` (fewer if it finishes first).
    static func collect(_ stream: AsyncStream<ArraySlice<UInt8>>, count: Int) async -> [[UInt8]] {
        var values: [[UInt8]] = []
        for await value in stream {
            values.append(Array(value))
            if values.count == count { break }
        }
        return values
    }

    @Test("discover, read, long read, write, long write, Write Command, Error Response, notifications and indications, then the streams finish at disconnection")
    func operationsOverEngine() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("att-performer-\(UUID().uuidString.prefix(8)).json")
        try Data(Self.gatt.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--name", "bumble-att", "--uuid16", "FFF0", "--gatt", file.path]) { peer in
            let events = CocPeerEvents(peer)
            let transport = try await TransportSpec(parsing: peer.transports[0]).open()
            let host = EngineHost(transport: transport, configuration: HostEngineConfiguration(randomAddress: .randomStatic(0x0A7A_7E00_0001)))
            _ = try await host.perform(.start).get()
            let address = try #require(peer.ready.device.flatMap { BluetoothAddress(parsing: $0.address + "/random") })
            let connection = try await host.connect(to: address)
            let queue = GATTOperationQueue(performer: connection)
            #expect(await connection.mtu == 23)

            // Discovery.
            let services = try await queue.run(GATTOperations.discoverAllPrimaryServices())
            let service = try #require(services.first { $0.uuid == BluetoothUUID(0xFFF0) }, "services: \(services)")
            let characteristics = try await queue.run(GATTOperations.discoverCharacteristics(of: service))
            #expect(characteristics.map(\.uuid) == [0xFFF1, 0xFFF2, 0xFFF3, 0xFFF4].map { BluetoothUUID($0) })
            guard characteristics.count == 4 else { throw Failure(description: "characteristics: \(characteristics)") }
            let (short, long, notifying, indicating) = (characteristics[0], characteristics[1], characteristics[2], characteristics[3])
            #expect(short.properties.contains(.writeWithoutResponse) && indicating.properties.contains(.indicate))
            let descriptors = try await queue.run(GATTOperations.discoverDescriptors(of: notifying))
            #expect(descriptors.contains { $0.uuid == BluetoothUUID(0x2902) }, "descriptors: \(descriptors)")

            // Reads: one Read Response, then a 100-octet value by Read Blobs at ATT_MTU 23.
            #expect(try await queue.run(GATTOperations.read(handle: short.valueHandle)) == [0xCA, 0xFE])
            #expect(try await queue.run(GATTOperations.readLong(handle: long.valueHandle)) == Self.longValue)

            // Writes, each reported by bumble and read back.
            try await queue.run(GATTOperations.write([1, 2, 3], to: short.valueHandle))
            #expect(await events.wait { $0["write"] as? Int == Int(short.valueHandle) && $0["value"] as? String == "010203" } != nil)
            #expect(try await queue.run(GATTOperations.read(handle: short.valueHandle)) == [1, 2, 3])
            let longWrite = (0..<60).map { UInt8(0xFF - $0) }
            try await queue.run(GATTOperations.writeLong(longWrite, to: long.valueHandle))
            #expect(await events.wait { $0["write"] as? Int == Int(long.valueHandle) && $0["value"] as? String == Self.hex(longWrite) } != nil)
            #expect(try await queue.run(GATTOperations.readLong(handle: long.valueHandle)) == longWrite)
            try await queue.run(GATTOperations.writeWithoutResponse([0x09], to: short.valueHandle))
            #expect(await events.wait { $0["write"] as? Int == Int(short.valueHandle) && $0["value"] as? String == "09" } != nil)

            // An Error Response comes back as a PDU and the procedure turns it into its typed error.
            do {
                _ = try await queue.run(GATTOperations.read(handle: 0x0FFF))
                Issue.record("a read of handle 0x0FFF succeeded")
            } catch let error as GATTError {
                #expect(error.attErrorCode == .invalidHandle, "\(error)")
            }

            // Notifications (bumble's counter: 0...4) and indications (0...2, confirmed by the engine).
            let notified = await connection.notifications(for: notifying.valueHandle)
            let indicated = await connection.notifications(for: indicating.valueHandle)
            let cccd = try await queue.run(GATTOperations.subscribe(to: notifying))
            #expect(descriptors.contains { $0.handle == cccd })
            #expect(await Self.collect(notified, count: 5) == (0..<5).map { [UInt8($0), 0, 0, 0] })
            _ = try await queue.run(GATTOperations.subscribe(to: indicating, indications: true))
            #expect(await Self.collect(indicated, count: 3) == (0..<3).map { [UInt8($0), 0, 0, 0] })
            #expect(await events.wait { $0["counter_done"] as? Int == Int(indicating.valueHandle) } != nil, "bumble got every confirmation")

            // The link ends: a stream registered now finishes, and requests fail with the reason.
            let ending = await connection.notifications(for: notifying.valueHandle)
            _ = try await connection.disconnect()
            #expect(await Self.collect(ending, count: 1).isEmpty)
            do throws(ConnectionError) {
                _ = try await connection.request(.readRequest(handle: short.valueHandle))
                Issue.record("a request after the disconnection was answered")
            } catch {
                #expect(error == .disconnected(.unknownConnectionIdentifier))
            }
            await host.close()
        }
    }
}
