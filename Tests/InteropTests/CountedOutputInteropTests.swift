import BluewireCore
import Foundation
import Testing
import PeerTestSupport

/// Counts in the CLI's lines read as English: `1 service, 1 characteristic`, not `1 services,
/// 1 characteristics` (what `gatt dump` printed before). A database of exactly one service with one
/// characteristic, served by `bluewire serve` and dumped by `bluewire gatt dump` on the same bumble link.
@Suite("CLI counts: a count of one is singular")
struct CountedOutputInteropTests {
    /// One primary service (0x180F Battery) with one readable characteristic (0x2A19 Battery Level).
    static let database = """
        { "attributes": [
          { "handle": "0x0001", "type": "0x2800", "value": "0f18", "perms": ["read"] },
          { "handle": "0x0002", "type": "0x2803", "value": "020300192a", "perms": ["read"] },
          { "handle": "0x0003", "type": "0x2a19", "value": "64", "perms": ["read"] } ] }
        """

    @Test("gatt dump of a one-service, one-characteristic server says 1 service, 1 characteristic")
    func oneServiceOneCharacteristic() async throws {
        let dbFile = FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString.prefix(8))-one.json")
        try Self.database.write(to: dbFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: dbFile) }
        let address = newStaticAddress()
        try await withBumblePeer([.tcp, .tcp]) { peer in
            // --no-eatt: the file's attributes alone (no GATT service added for EATT).
            let serve = try PeripheralProcess("bluewire", [
                "serve", "--db", dbFile.path, "--transport", peer.transports[0], "--own-address", address.hexString, "--no-eatt",
            ])
            defer { serve.stop() }
            _ = try await serve.first("the advertising line") { $0.hasPrefix("advertising \"") }
            let dump = try await ProcessRunner.run(try ProcessRunner.bluewire,
                                                   ["gatt", "dump", "\(address.hexString)/random", "--transport", peer.transports[1]],
                                                   timeout: .seconds(30))
            #expect(dump.status == 0, "stderr: \(dump.standardError)")
            let header = try #require(dump.outputLines.first, "gatt dump printed nothing")
            #expect(header.contains(", 1 service, 1 characteristic, 3 attributes"), "header: \(header)")
            serve.send(signal: SIGINT)
            #expect(await serve.exitStatus() == 0, "stderr: \(serve.standardError)")
        }
    }
}
