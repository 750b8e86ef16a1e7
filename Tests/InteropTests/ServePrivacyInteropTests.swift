import Bluewire
import BluewireCore
import Foundation
import PeerTestSupport
import Testing

/// `bluewire serve --db --privacy` as a process, a bumble central (bumble's Security Manager, key store and
/// host-side resolver) watching and connecting: serve advertises from resolvable private addresses and
/// replaces them every `--rpa-rotation` (Core Vol 3 Part C §10.7); pairing with bonding gives bumble the
/// IRK and identity address (Vol 3 Part H §3.6.4-5), the bond file keeps the IRK in the bond's
/// `local.irk`, and the next serve process advertises with the same IRK, so bumble resolves its new
/// private address, connects by identity and encrypts without pairing.
@Suite("bluewire serve --privacy: rotating private addresses, a bonded bumble central reconnecting by identity", .serialized)
struct ServePrivacyInteropTests {
    static let database = """
        { "services": [ { "uuid": "0xffe0", "characteristics": [
          { "uuid": "0xffe1", "properties": ["read"], "perms": ["read", "read_encrypted"], "value": "e1" } ] } ] }
        """
    static let encrypted = 3

    /// bumble's scan until an advertiser of `name` shows an address not in `excluding`; stops the scan.
    static func scan(_ peer: BumblePeer, _ log: EventLog<PeerJSON>, name: String, excluding: [String]) async throws -> PeerJSON {
        let wanted: @Sendable (PeerJSON) -> Bool = { event in
            guard event.isCentral(0, "advertisement"), let address = event["advertisement"]?.string else { return false }
            return !excluding.contains(address)
        }
        // Only what this scan reports (an earlier scan may have reported such an address already).
        let before = await log.events.filter(wanted).count
        peer.command(0, "scan", ["name": name])
        let seen = try await log.wait(for: before + 1, within: .seconds(20), "a new advertiser address", where: wanted)[before]
        let stops = await log.events.filter { $0.isCentral(0, "scanning") }.count
        peer.command(0, "stop_scan")
        try await log.wait(for: stops + 1, "the scan stopped") { $0.isCentral(0, "scanning") }
        return seen
    }

    @Test("new private address each rotation; bonded; the next process keeps the IRK, bumble reconnects by identity without pairing")
    func rotatesAndReconnects() async throws {
        let dbFile = try ServeCommandInteropTests.temporaryFile(Self.database, "private.json")
        let keys = FileManager.default.temporaryDirectory.appendingPathComponent("serve-privacy-\(UUID().uuidString.prefix(8)).json")
        defer {
            try? FileManager.default.removeItem(at: dbFile)
            try? FileManager.default.removeItem(at: keys)
        }
        let identity = newStaticAddress()
        try await withBumblePeer([.tcp], arguments: ["--central", identity.hexString, "--manual", "--pairing", "3:1:0"]) { peer in
            let log = EventLog(peer.events.map { PeerJSON(line: $0) })
            let arguments = ["serve", "--db", dbFile.path, "--name", "serve-private", "--transport", peer.transports[0],
                             "--io", "no-input-no-output", "--keys", keys.path, "--privacy", "--rpa-rotation", "1"]
            let first = try PeripheralProcess("bluewire", arguments + ["--own-address", identity.hexString])
            defer { first.stop() }
            let note = try await first.first("the privacy line") { $0.hasPrefix("privacy: ") }
            #expect(note.contains("every 1 s") && note.contains("a new IRK") && note.contains(identity.hexString), "\(note)")
            try await first.first("the advertising line") { $0.hasPrefix("advertising \"") }

            // Two private addresses a rotation apart; neither is the identity, nothing resolves them yet.
            let one = try await Self.scan(peer, log, name: "serve-private", excluding: [])
            let oneAddress = try #require(one["advertisement"]?.string)
            let two = try await Self.scan(peer, log, name: "serve-private", excluding: [oneAddress])
            let twoAddress = try #require(two["advertisement"]?.string)
            for seen in [one, two] {
                #expect(seen["resolvable"] == .bool(true) && seen["identity"] == .null, "\(seen)")
                #expect(seen["advertisement"]?.string != identity.hexString)
            }
            #expect(oneAddress != twoAddress)

            // bumble connects to the current private address (a rotation in between: it times out and
            // scans again) and pairs with bonding.
            var connected = false
            var excluded: [String] = []
            for _ in 0..<3 where !connected {
                let current = try #require(try await Self.scan(peer, log, name: "serve-private", excluding: excluded)["advertisement"]?.string)
                excluded.append(current)
                let before = await log.events.filter { $0.isCentral(0, "connected") || $0.isCentral(0, "connect_timeout") }.count
                peer.command(0, "connect", ["address": current, "discover": false, "timeout": 1])
                let outcome = try await log.wait(for: before + 1, "bumble's connection") {
                    $0.isCentral(0, "connected") || $0.isCentral(0, "connect_timeout")
                }.last
                connected = outcome?["connected"] != nil
            }
            #expect(connected)
            peer.command(0, "pair")
            let paired = try await first.first("serve's paired line", within: .seconds(30)) { $0.hasPrefix("paired ") || $0.hasPrefix("pairing failed") }
            #expect(paired.contains(", bonded"), "\(paired)")
            let bumbleKeys = try await log.first("bumble's pairing") { $0.isCentral(0, "paired") }["paired"]
            try await first.first("the bond saved") { $0.hasPrefix("bonds saved to ") }
            let document = try BondFile.decodeDocument(try String(contentsOf: keys, encoding: .utf8))
            let localIRK = try #require(document.bonds.first?.localKeys.identityResolvingKey)
            #expect(bumbleKeys?["irk"]?.string == hexBytes(localIRK), "bumble holds the IRK the file keeps")
            #expect(document.bonds.first?.localKeys.identityAddress?.octets == identity.littleEndianBytes)
            first.send(signal: SIGINT)
            #expect(await first.exitStatus() == 0, "stderr: \(first.standardError)")
            try await log.first("bumble to see the disconnection") { $0.isCentral(0, "disconnected") }

            // The next process: the file's address and IRK; bumble resolves its new private address.
            let second = try PeripheralProcess("bluewire", arguments)
            defer { second.stop() }
            let secondNote = try await second.first("the privacy line") { $0.hasPrefix("privacy: ") }
            #expect(secondNote.contains("the IRK of the bonds in") && secondNote.contains(identity.hexString), "\(secondNote)")
            try await second.first("the advertising line") { $0.hasPrefix("advertising \"") }
            let resolved = try await Self.scan(peer, log, name: "serve-private", excluding: excluded + [oneAddress, twoAddress])
            #expect(resolved["identity"]?.string == identity.hexString, "\(resolved)")

            peer.command(0, "connect_identity", ["address": identity.hexString, "timeout": 1, "attempts": 5])
            let again = try await log.first(within: .seconds(30), "bumble's connection by identity") {
                $0.isCentral(0, "connected") && $0["rpa"] != nil
            }
            #expect(again["connected"]?.string == identity.hexString, "\(again)")
            #expect(again["rpa"]?.string != identity.hexString)
            let pairings = await log.events.filter { $0.isCentral(0, "paired") }.count
            peer.command(0, "encrypt")
            let encryption = try await second.first("the encryption line") { $0.hasPrefix("encryption 0x") }
            #expect(encryption.contains("level 2"), "\(encryption)")
            peer.command(0, "read", ["handle": Self.encrypted])
            let read = try await log.first("the encrypted read") { $0.isCentral(0, "read", Self.encrypted) }
            #expect(read["value"]?.string == "e1", "served at once: the link is encrypted with the stored key \(read)")
            #expect(await !second.lines.events.contains { $0.hasPrefix("paired ") }, "no new pairing")
            #expect(await log.events.filter { $0.isCentral(0, "paired") }.count == pairings)
            second.send(signal: SIGINT)
            #expect(await second.exitStatus() == 0, "stderr: \(second.standardError)")
        }
    }

    @Test("--rpa-rotation without --privacy, out of range, and --privacy with --throughput are usage errors")
    func usageErrors() async throws {
        for arguments in [
            ["serve", "--db", "x.json", "--rpa-rotation", "5"],
            ["serve", "--db", "x.json", "--privacy", "--rpa-rotation", "0"],
            ["serve", "--throughput", "--privacy"],
        ] {
            let process = try PeripheralProcess("bluewire", arguments)
            defer { process.stop() }
            #expect(await process.exitStatus() == 64, "\(arguments): \(process.standardError)")
            #expect(process.standardError.contains("privacy") || process.standardError.contains("rpa-rotation"), "\(process.standardError)")
        }
    }
}
