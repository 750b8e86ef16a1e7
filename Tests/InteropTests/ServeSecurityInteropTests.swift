import Bluewire
import BluewireCore
import Foundation
import PeerTestSupport
import Testing

/// `bluewire serve --db` with protected characteristics, a bumble central (bumble's Security Manager,
/// Tests/Peers/bumble_pairing.py) reading them before and after pairing with each method: the
/// database's `read_encrypted` / `read_authenticated` permissions are checked against the link
/// (Core Vol 3 Part C §10.3.1): Insufficient Encryption (0x0F) or Insufficient Authentication (0x05)
/// before, the values after; Just Works never gives an authenticated link.
@Suite("bluewire serve: pairing and protected characteristics against a bumble central", .serialized)
struct ServeSecurityInteropTests {
    struct Method: Sendable, CustomStringConvertible {
        var name: String
        /// bumble's --pairing IO:SC:MITM[:pPASSKEY].
        var bumble: String
        /// serve's pairing options.
        var serve: [String]
        /// How serve names the method on its `paired` line.
        var printed: String
        var authenticated: Bool
        /// serve displays the passkey: the test types it into bumble.
        var serveDisplays = false
        var description: String { name }
    }

    static let passkey = 123_456
    static let methods: [Method] = [
        Method(name: "SC Just Works", bumble: "3:1:0", serve: ["--io", "no-input-no-output"],
               printed: "SC Just Works", authenticated: false),
        Method(name: "SC Numeric Comparison", bumble: "1:1:1", serve: ["--io", "display-yes-no", "--yes"],
               printed: "SC Numeric Comparison", authenticated: true),
        Method(name: "SC Passkey Entry, serve displays", bumble: "2:1:1", serve: ["--io", "display-only", "--passkey", "\(passkey)"],
               printed: "SC Passkey Entry", authenticated: true, serveDisplays: true),
        Method(name: "SC Passkey Entry, serve enters", bumble: "0:1:1:p\(passkey)", serve: ["--io", "keyboard-only", "--passkey", "\(passkey)"],
               printed: "SC Passkey Entry", authenticated: true),
        Method(name: "legacy Just Works", bumble: "3:0:0", serve: ["--io", "no-input-no-output", "--legacy"],
               printed: "legacy Just Works", authenticated: false),
        Method(name: "legacy Passkey Entry, serve displays", bumble: "2:0:1", serve: ["--io", "display-only", "--legacy", "--passkey", "\(passkey)"],
               printed: "legacy Passkey Entry", authenticated: true, serveDisplays: true),
    ]

    /// An encrypted value at 0x0003 and an authenticated one at 0x0005 (services form, handles from 1).
    static let database = """
        { "services": [ { "uuid": "0xffe0", "characteristics": [
          { "uuid": "0xffe1", "properties": ["read"], "perms": ["read", "read_encrypted"], "value": "e1" },
          { "uuid": "0xffe2", "properties": ["read"], "perms": ["read", "read_authenticated"], "value": "e2" } ] } ] }
        """
    static let encrypted = 3
    static let authenticated = 5

    /// Reads `handle` (the `count`-th read of it) and returns bumble's answer.
    /// The bonded bumble central connects to `serve` again and encrypts with the stored key: serve prints
    /// an encryption line at level 2 (Core Vol 3 Part C §10.2.1), and neither side pairs again.
    static func reconnectEncryptedWithoutPairing(_ serve: PeripheralProcess, _ peer: BumblePeer, _ log: EventLog<PeerJSON>) async throws {
        peer.command(0, "connect", ["discover": false])
        try await log.wait(for: 2, "bumble's second connection") { $0.isCentral(0, "connected") }
        let pairings = await log.events.filter { $0.isCentral(0, "paired") }.count
        peer.command(0, "encrypt")
        let encryption = try await serve.first("the encryption line") { $0.hasPrefix("encryption 0x") }
        #expect(encryption.contains("level 2"), "\(encryption)")
        #expect(await !serve.lines.events.contains { $0.hasPrefix("paired ") }, "no new pairing")
        #expect(await log.events.filter { $0.isCentral(0, "paired") }.count == pairings)
    }

    static func read(_ peer: BumblePeer, _ log: EventLog<PeerJSON>, _ handle: Int, _ count: Int) async throws -> PeerJSON {
        peer.command(0, "read", ["handle": handle])
        return try await log.wait(for: count, "read \(handle) #\(count)") { $0.isCentral(0, "read", handle) }[count - 1]
    }

    @Test("refused before pairing with the right error, read after as the method's level allows", arguments: methods)
    func protectedReads(_ method: Method) async throws {
        let dbFile = try ServeCommandInteropTests.temporaryFile(Self.database, "protected.json")
        defer { try? FileManager.default.removeItem(at: dbFile) }
        let address = newStaticAddress()
        try await withBumblePeer([.tcp], arguments: ["--central", address.hexString, "--manual", "--pairing", method.bumble]) { peer in
            let log = EventLog(peer.events.map { PeerJSON(line: $0) })
            let serve = try PeripheralProcess("bluewire", [
                "serve", "--db", dbFile.path, "--transport", peer.transports[0], "--own-address", address.hexString,
            ] + method.serve)
            defer { serve.stop() }
            try await serve.first("the advertising line") { $0.hasPrefix("advertising \"") }
            peer.command(0, "connect", ["discover": false])
            try await log.first("bumble's connection") { $0.isCentral(0, "connected") }

            #expect(try await Self.read(peer, log, Self.encrypted, 1)["error"]?.int == 0x0F, "Insufficient Encryption")
            #expect(try await Self.read(peer, log, Self.authenticated, 1)["error"]?.int == 0x05, "Insufficient Authentication")
            let refused = try await serve.first("the refused line") { $0.hasPrefix("refused ") && $0.contains(" 0x0003: ") }
            #expect(refused.lowercased().contains("encryption"), "\(refused)")

            peer.command(0, "pair")
            if method.serveDisplays {
                // serve shows the passkey (--passkey fixes it); bumble's user types what it shows.
                let shown = try await serve.first("serve's passkey line") { $0.hasPrefix("passkey 0x") }
                #expect(shown.contains(" \(Self.passkey) "), "\(shown)")
                try await log.first("bumble asking for the passkey") { $0.isCentral(0, "passkey_wanted") }
                peer.command(0, "passkey", ["value": Self.passkey])
            }
            let paired = try await serve.first("serve's paired line", within: .seconds(30)) { $0.hasPrefix("paired ") || $0.hasPrefix("pairing failed") }
            #expect(paired.hasPrefix("paired 0x") && paired.contains(": \(method.printed), "), "\(paired)")
            #expect(paired.contains(", bonded"), "\(paired)")
            try await log.first("bumble's pairing") { $0.isCentral(0, "paired") }
            let encryption = try await serve.first("serve's encryption line") { $0.hasPrefix("encryption 0x") }
            #expect(encryption.contains("unauthenticated") == !method.authenticated, "\(encryption)")

            #expect(try await Self.read(peer, log, Self.encrypted, 2)["value"]?.string == "e1")
            let second = try await Self.read(peer, log, Self.authenticated, 2)
            if method.authenticated {
                #expect(second["value"]?.string == "e2")
            } else {
                #expect(second["error"]?.int == 0x05, "Just Works is unauthenticated: \(second)")
            }
            serve.send(signal: SIGINT)
            #expect(await serve.exitStatus() == 0, "stderr: \(serve.standardError)")
        }
    }

    @Test("Numeric Comparison without --yes: rejected, pairing failed by name, the value stays refused")
    func comparisonRejectedWithoutYes() async throws {
        let dbFile = try ServeCommandInteropTests.temporaryFile(Self.database, "protected.json")
        defer { try? FileManager.default.removeItem(at: dbFile) }
        let address = newStaticAddress()
        try await withBumblePeer([.tcp], arguments: ["--central", address.hexString, "--manual", "--pairing", "1:1:1"]) { peer in
            let log = EventLog(peer.events.map { PeerJSON(line: $0) })
            let serve = try PeripheralProcess("bluewire", [
                "serve", "--db", dbFile.path, "--transport", peer.transports[0], "--own-address", address.hexString,
                "--io", "display-yes-no",
            ])
            defer { serve.stop() }
            try await serve.first("the advertising line") { $0.hasPrefix("advertising \"") }
            peer.command(0, "connect", ["discover": false])
            try await log.first("bumble's connection") { $0.isCentral(0, "connected") }
            peer.command(0, "pair")
            let compare = try await serve.first("the comparison line") { $0.hasPrefix("compare 0x") }
            #expect(compare.hasSuffix(": rejected (no --yes)"), "\(compare)")
            let failed = try await serve.first("the pairing failed line") { $0.hasPrefix("pairing failed 0x") }
            #expect(failed.contains("Numeric Comparison Failed (sent by serve)"), "\(failed)")
            try await log.first("bumble's pairing failure") { $0.isCentral(0, "pairing_failed") }
            #expect(try await Self.read(peer, log, Self.encrypted, 1)["error"]?.int == 0x0F, "still Insufficient Encryption")
            #expect(await !serve.lines.events.contains { $0.hasPrefix("paired ") })
            serve.send(signal: SIGINT)
            #expect(await serve.exitStatus() == 0, "stderr: \(serve.standardError)")
        }
    }

    @Test("--keys: a central bonded with one serve process reconnects to the next one encrypted, without pairing")
    func bondedCentralReconnectsEncrypted() async throws {
        let dbFile = try ServeCommandInteropTests.temporaryFile(Self.database, "protected.json")
        let keys = FileManager.default.temporaryDirectory.appendingPathComponent("serve-keys-\(UUID().uuidString.prefix(8)).json")
        defer {
            try? FileManager.default.removeItem(at: dbFile)
            try? FileManager.default.removeItem(at: keys)
        }
        let address = newStaticAddress()
        try await withBumblePeer([.tcp], arguments: ["--central", address.hexString, "--manual", "--pairing", "3:1:0"]) { peer in
            let log = EventLog(peer.events.map { PeerJSON(line: $0) })
            // The file gives the address: no --own-address, so the second process must take it from there.
            let arguments = ["serve", "--db", dbFile.path, "--transport", peer.transports[0], "--io", "no-input-no-output", "--keys", keys.path]
            let first = try PeripheralProcess("bluewire", arguments + ["--own-address", address.hexString])
            defer { first.stop() }
            try await first.first("the advertising line") { $0.hasPrefix("advertising \"") }
            peer.command(0, "connect", ["discover": false])
            try await log.first("bumble's connection") { $0.isCentral(0, "connected") }
            peer.command(0, "pair")
            let paired = try await first.first("the paired line", within: .seconds(30)) { $0.hasPrefix("paired ") || $0.hasPrefix("pairing failed") }
            #expect(paired.contains(", bonded"), "\(paired)")
            try await first.first("the bond saved") { $0.hasPrefix("bonds saved to ") }
            let document = try BondFile.decodeDocument(try String(contentsOf: keys, encoding: .utf8))
            #expect(document.bonds.count == 1 && document.localAddress?.value == address.value)
            let mode = try FileManager.default.attributesOfItem(atPath: keys.path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            first.send(signal: SIGINT)
            #expect(await first.exitStatus() == 0, "stderr: \(first.standardError)")
            try await log.first("bumble to see the disconnection") { $0.isCentral(0, "disconnected") }

            let second = try PeripheralProcess("bluewire", arguments)
            defer { second.stop() }
            let banner = try await second.first("the advertising line") { $0.hasPrefix("advertising \"") }
            #expect(banner.contains(" as \(address) "), "the bond file's address: \(banner)")
            try await Self.reconnectEncryptedWithoutPairing(second, peer, log)
            // The first read of the encrypted value: served at once, the link encrypted with the stored key.
            #expect(try await Self.read(peer, log, Self.encrypted, 1)["value"]?.string == "e1")
            second.send(signal: SIGINT)
            #expect(await second.exitStatus() == 0, "stderr: \(second.standardError)")
        }
    }
}
