import BluewireCore
import Foundation
import Testing
import PeerTestSupport

extension ServeCommandInteropTests {
    /// A name too long to sit beside a 128-bit service UUID in 31 octets: the advertising data keeps
    /// the name, shortened and marked so, ahead of the service list; the complete name goes to the scan
    /// response. `serve` says exactly that, and a scanner on the same link receives those octets.
    @Test func servePrintsExactlyWhatTheAdvertisingDataAndScanResponseCarry() async throws {
        let service = "B1E3E000-7A55-4C3E-9F1B-2D6C8A4E5F00"
        let dbFile = try Self.temporaryFile("""
            { "services": [ { "uuid": "\(service)", "characteristics": [
                { "uuid": "0x2a37", "properties": ["read"], "value": "00" } ] } ] }
            """, "services128.json")
        defer { try? FileManager.default.removeItem(at: dbFile) }
        let address = newStaticAddress()
        try await withBumblePeer([.tcp, .tcp], arguments: []) { peer in
            let serve = try PeripheralProcess("bluewire", [
                "serve", "--db", dbFile.path, "--name", "Bluewire Thermometer", "--json",
                "--transport", peer.transports[0], "--own-address", address.hexString,
            ])
            defer { serve.stop() }
            let line = try await serve.first("the advertising line") { $0.contains("\"advertising\"") }
            let banner = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            expectSnakeCaseKeys(banner)
            #expect(banner["address"] as? String == "\(address)" && !line.contains("\\/"), "no escaped slashes: \(line)")
            #expect(banner["name"] as? String == "Bluewire" && banner["name_shortened"] as? Bool == true, "\(line)")
            #expect(banner["advertising_data"] as? [String] == [
                "flags 0x06", "shortened local name \"Bluewire\"", "complete service list \(service)",
            ])
            #expect(banner["scan_response"] as? [String] == ["complete local name \"Bluewire Thermometer\""])
            #expect(banner["scan_response_hex"] as? String == "1509" + hexString(Array("Bluewire Thermometer".utf8)))
            let advertisingData = try #require(banner["advertising_data_hex"] as? String)

            // A scanner on the other controller receives exactly those octets in the advertising data.
            let scan = try await ProcessRunner.run(try ProcessRunner.bluewire, [
                "scan", "--duration", "2", "--json", "--address", address.hexString, "--transport", peer.transports[1],
            ])
            #expect(scan.status == 0, "stderr: \(scan.standardError)")
            let seen = try #require(scan.outputLines.last.flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] },
                                    "stdout: \(scan.standardOutput)")
            #expect(seen["advertising_data"] as? String == advertisingData)
            #expect(seen["name"] as? String == "Bluewire")
        }
    }
}
