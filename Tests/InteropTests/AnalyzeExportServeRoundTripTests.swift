import BluewireAnalysis
import BluewireCore
import BluewireGATT
import BluewireSnoop
import Foundation
import Testing
import PeerTestSupport

/// The database a recorded session reveals is one Bluewire can serve again unchanged: analyze the
/// capture of Bluewire as central against a bumble peripheral, export the peer's database, serve it
/// with `bluewire serve --db`, and let a bumble central on a fresh link discover and read it.
@Suite("Analyze, export, serve: the round trip of a recorded database")
struct AnalyzeExportServeRoundTripTests {
    /// Captures/ at the repository root, from this file's path (Tests/InteropTests/<file>).
    static let capture = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Captures/bumble_central_gatt_dump.btsnoop")

    /// bumble prints `UUID-16:180F`, `UUID-32:…` or the 128-bit form, sometimes followed by ` (Name)`.
    static func bumbleUUID(_ text: String?) -> BluetoothUUID? {
        guard var body = text?.split(separator: " ").first.map(String.init) else { return nil }
        if let colon = body.firstIndex(of: ":") { body = String(body[body.index(after: colon)...]) }
        return BluetoothUUID(parsing: body)
    }

    @Test func bumbleFindsTheExportedDatabaseOfARecordedSessionWithTheSameHandlesUUIDsPropertiesAndValues() async throws {
        let bytes = [UInt8](try Data(contentsOf: Self.capture))
        let analysis = CaptureAnalyzer.analyze(CaptureReader.readAll(bytes).records)
        let device = try #require(analysis.devices.first, "the capture's peer device")
        let json = try device.database().exportJSON()
        let exported = try GATTDatabase(json: json)
        // The capture is of a real discovery: several services, a long value, so the trip is not trivial.
        try #require(exported.characteristics.count >= 3, "characteristics analyzed: \(exported.characteristics.count)")

        let dbFile = FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString.prefix(8))-analyzed.json")
        try json.write(to: dbFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: dbFile) }

        let address = newStaticAddress()
        try await withBumblePeer([.tcp], arguments: ["--central", address.hexString]) { peer in
            let peerLog = EventLog(peer.events.map { PeerJSON(line: $0) })
            let serve = try PeripheralProcess("bluewire", [
                // The file's attributes alone, handle for handle (no GATT service added for EATT).
                "serve", "--db", dbFile.path, "--transport", peer.transports[0], "--own-address", address.hexString, "--no-eatt",
            ])
            defer { serve.stop() }
            _ = try await serve.first("the advertising line") { $0.hasPrefix("advertising \"") }
            try await peerLog.first("bumble's discovery") { $0.isCentral(0, "discovered") }

            let entries = await peerLog.events.filter { $0.isCentral(0, "characteristic") }
            #expect(entries.count == exported.characteristics.count, "bumble: \(entries)")
            for characteristic in exported.characteristics {
                let label = "\(characteristic.uuid) at 0x\(hex(characteristic.valueHandle, width: 4))"
                // bumble's CharacteristicProxy.handle is the value handle of the declaration it discovered.
                let entry = try #require(entries.first { $0["handle"]?.int == Int(characteristic.valueHandle) }, "\(label) missing")
                #expect(Self.bumbleUUID(entry["characteristic"]?.string) == characteristic.uuid, "\(label): \(entry)")
                #expect(entry["properties"]?.int == Int(characteristic.properties.rawValue), "\(label): \(entry)")
                let service = exported.attributes.last { $0.isServiceDeclaration && $0.handle < characteristic.declarationHandle }
                #expect(service?.cachedValue != nil && Self.bumbleUUID(entry["service"]?.string)?.attBytes == service?.cachedValue,
                        "\(label): \(entry)")
                if characteristic.properties.contains(.read) {
                    let value = try #require(exported[handle: characteristic.valueHandle]?.cachedValue, "\(label) has no analyzed value")
                    #expect(entry["value"]?.string == hexBytes(value), "\(label)")
                }
            }
            serve.send(signal: SIGINT)
            #expect(await serve.exitStatus() == 0, "stderr: \(serve.standardError)")
        }
    }
}
