import BluewireCore
import Foundation
import PeerTestSupport
import Testing

/// `bluewire serve` offers Enhanced ATT as BlueZ does (Core Vol 3 Part G §5.3.2): Server and Client
/// Supported Features in the GATT service, SPSM 0x0027 for Enhanced Credit Based channels. A bumble
/// central (Tests/Peers/bumble_coc.py, bumble's `Client.connect_eatt`) opens two bearers and reads on
/// both at once; with `--no-eatt` its enhanced request is refused.
@Suite("bluewire serve offers EATT to a bumble central")
struct ServeEATTInteropTests {
    /// Handles 1-3: the Battery service; the GATT service serve adds goes after them (4-8).
    static let database = """
        { "services": [ { "uuid": "0x180f", "characteristics": [
            { "uuid": "0x2a19", "properties": ["read"], "value": "64" } ] } ] }
        """

    static func withServe<R>(_ options: [String], _ body: (BumblePeer, EventLog<PeerJSON>, PeripheralProcess) async throws -> R) async throws -> R {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("serve-eatt-\(UUID().uuidString.prefix(8)).json")
        try database.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let address = newStaticAddress()
        return try await withBumblePeer([.tcp], arguments: ["--central", address.hexString], script: "bumble_coc.py") { peer in
            let peerLog = EventLog(peer.events.map { PeerJSON(line: $0) })
            let serve = try PeripheralProcess("bluewire", [
                "serve", "--db", file.path, "--transport", peer.transports[0], "--own-address", address.hexString,
            ] + options)
            defer { serve.stop() }
            try await serve.first("the advertising line") { $0.hasPrefix("advertising \"") }
            peer.send(line: #"{"op": "connect"}"#)
            try await peerLog.first("bumble's connection") { $0["connected"] != nil }
            let result = try await body(peer, peerLog, serve)
            serve.send(signal: SIGINT)
            #expect(await serve.exitStatus() == 0, "stderr: \(serve.standardError)")
            return result
        }
    }

    @Test("two EATT bearers open on SPSM 0x0027; reads on both are answered by the served database, features included")
    func bearersServeTheDatabase() async throws {
        try await Self.withServe([]) { peer, peerLog, serve in
            let offered = try await serve.first("the eatt line") { $0.hasPrefix("eatt on ") }
            #expect(offered == "eatt on SPSM 0x0027 (bearer MTU 517): Server Supported Features 0x0006, Client Supported Features 0x0008")
            peer.send(line: #"{"op": "eatt", "count": 2}"#)
            let opened = try await peerLog.first("bumble's bearers") { $0["eatt"] != nil || $0["error"] != nil }
            #expect(opened["eatt"]?.int == 2, "\(opened)")
            let bearers = try await serve.lines.wait(for: 2, "serve's bearer lines") { $0.hasPrefix("eatt bearer 0x") }
            #expect(bearers.allSatisfy { $0.contains(" cid 0x00") && $0.contains(": ATT_MTU ") }, "\(bearers)")
            // Both bearers at once: the Battery Level on one, Server Supported Features (EATT bit) on the other.
            peer.send(line: #"{"op": "eatt_read", "bearer": 0, "handles": [3]}"#)
            peer.send(line: #"{"op": "eatt_read", "bearer": 1, "handles": [6, 3]}"#)
            let reads = try await peerLog.wait(for: 3, "the EATT reads") { $0["eatt_read"] != nil }
            #expect(reads.filter { $0["eatt_read"]?.int == 3 }.map { $0["value"]?.string } == ["64", "64"], "\(reads)")
            #expect(reads.first { $0["eatt_read"]?.int == 6 }?["value"]?.string == "01", "EATT bit: \(reads)")
            try await serve.lines.wait(for: 3, "serve's read lines") { $0.hasPrefix("read 0x") }
        }
    }

    @Test("--no-eatt: no feature characteristics, SPSM 0x0027 not registered, the enhanced request refused")
    func noEATT() async throws {
        try await Self.withServe(["--no-eatt"]) { peer, peerLog, serve in
            peer.send(line: #"{"op": "eatt", "count": 1}"#)
            let answer = try await peerLog.first("bumble's refused bearer") { $0["eatt"] != nil || $0["error"] != nil }
            #expect(answer["eatt"] == nil, "no bearer opened: \(answer)")
            #expect(answer["error"]?.string?.isEmpty == false, "bumble's connect_eatt failed: \(answer)")
            let lines = await serve.lines.events
            #expect(!lines.contains { $0.hasPrefix("eatt") }, "\(lines)")
        }
    }
}
