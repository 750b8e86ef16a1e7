import Bluewire
import Foundation
import PeerTestSupport
import Testing

/// `bluewire bonds list|remove` and `--keys` on bond files written by real pairings with a bumble
/// peripheral (bumble's Security Manager, Tests/Peers/bumble_pairing.py), and on damaged files.
@Suite("bluewire bonds and --keys", .serialized)
struct BondsCLIInteropTests {
    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bonds-cli-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static func jsonObject(_ result: ProcessResult) throws -> [String: Any] {
        try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any],
            "stdout: \(result.standardOutput) stderr: \(result.standardError)")
    }

    @Test("the default file: pair saves there (0600), list shows the bond, remove deletes it, unknown is exit 1, pairing again works")
    func defaultFileListRemovePairAgain() async throws {
        let data = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let environment = ["XDG_DATA_HOME": data.path]
        let file = data.appendingPathComponent("bluewire/keys.json").path
        let bluewire = try ProcessRunner.bluewire
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--name", "bumble-smp", "--interval", "50", "--pairing", "3:1:0"]) { peer in
            let events = PairCLIInteropTests.BumbleEvents(peer)
            let address = try PairCLIInteropTests.peripheralAddress(peer)
            let pair = ["pair", address, "--transport", peer.transports[0], "--io", "no-input-no-output", "--json"]
            let first = try await ProcessRunner.run(bluewire, pair, timeout: .seconds(30), environment: environment)
            #expect(first.status == 0, "stderr: \(first.standardError)")
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            #expect(mode == 0o600, "the default bond file \(file), owner-only")

            let list = try await ProcessRunner.run(bluewire, ["bonds", "list", "--json"], environment: environment)
            #expect(list.status == 0, "stderr: \(list.standardError)")
            let object = try Self.jsonObject(list)
            expectSnakeCaseKeys(object)
            #expect(object["file"] as? String == file)
            #expect(object["exists"] as? Bool == true)
            let stored = try BondFile.decodeDocument(try String(contentsOfFile: file, encoding: .utf8))
            #expect(object["local_address"] as? String == stored.localAddress.map { $0.hexString + "/random" })
            let bonds = try #require(object["bonds"] as? [[String: Any]])
            #expect(bonds.count == 1)
            let bond = try #require(bonds.first)
            #expect(bond["peer"] as? String == address)
            #expect(bond["level"] as? Int == 2)
            #expect(bond["level_name"] as? String == "encrypted, unauthenticated")
            #expect(bond["secure_connections"] as? Bool == true)
            #expect(bond["authenticated"] as? Bool == false)
            #expect(bond["key_size"] as? Int == 16)
            let keys = try #require(bond["keys"] as? [String])
            #expect(keys.first == "ltk", "the LE SC key: \(keys)")
            #expect(keys.contains("peer_irk") == (stored.bonds.first?.peerKeys.identityResolvingKey != nil))
            #expect(bond.keys.contains("identity"))

            let text = try await ProcessRunner.run(bluewire, ["bonds", "list"], environment: environment)
            #expect(text.status == 0)
            #expect(text.outputLines.first?.hasPrefix("\(file), local address ") == true, "\(text.standardOutput)")
            #expect(text.outputLines.count == 2 && text.outputLines[1].hasPrefix("\(address)"), "\(text.standardOutput)")
            #expect(text.standardOutput.contains("LE Secure Connections, key size 16, keys ltk"), "\(text.standardOutput)")

            let unknown = try await ProcessRunner.run(bluewire, ["bonds", "remove", "01:02:03:04:05:06"], environment: environment)
            #expect(unknown.status == 1)
            #expect(unknown.standardError == "bluewire: no bond with 01:02:03:04:05:06 in \(file)\n")
            #expect(try BondFile.decode(try String(contentsOfFile: file, encoding: .utf8)).count == 1, "an unknown address changes nothing")

            let remove = try await ProcessRunner.run(bluewire, ["bonds", "remove", address], environment: environment)
            #expect(remove.status == 0, "stderr: \(remove.standardError)")
            #expect(remove.standardOutput == "removed the bond with \(address) from \(file)\n")
            let after = try BondFile.decodeDocument(try String(contentsOfFile: file, encoding: .utf8))
            #expect(after.bonds.isEmpty)
            #expect(after.localAddress == stored.localAddress, "the local identity stays")
            #expect(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int == 0o600)
            let again = try await ProcessRunner.run(bluewire, ["bonds", "remove", address], environment: environment)
            #expect(again.status == 1)
            #expect(again.standardError.contains("no bond with \(address)"), "\(again.standardError)")

            // Without the bond, the next pair pairs (bumble sees a second pairing) and stores it again.
            let pairings = events.count("paired")
            let second = try await ProcessRunner.run(bluewire, pair, timeout: .seconds(30), environment: environment)
            #expect(second.status == 0, "stderr: \(second.standardError)")
            #expect(events.count("paired") == pairings + 1, "paired again at bumble")
            let relisted = try Self.jsonObject(try await ProcessRunner.run(bluewire, ["bonds", "list", "--json"], environment: environment))
            #expect((relisted["bonds"] as? [Any])?.count == 1)
        }
    }

    @Test("--keys FILE with legacy pairing: the peer's LTK, EDIV and Rand are stored; --bonds still names the same option")
    func legacyBondInExplicitFile() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("legacy.json").path
        let bluewire = try ProcessRunner.bluewire
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--name", "bumble-smp", "--interval", "50", "--pairing", "3:0:0"]) { peer in
            let address = try PairCLIInteropTests.peripheralAddress(peer)
            let result = try await ProcessRunner.run(bluewire, [
                "pair", address, "--transport", peer.transports[0], "--io", "no-input-no-output", "--legacy", "--keys", file,
            ], timeout: .seconds(30))
            #expect(result.status == 0, "stderr: \(result.standardError)")
            let list = try await ProcessRunner.run(bluewire, ["bonds", "list", "--json", "--bonds", file])
            let bond = try #require((try Self.jsonObject(list)["bonds"] as? [[String: Any]])?.first)
            #expect(bond["secure_connections"] as? Bool == false)
            #expect(bond["level"] as? Int == 2)
            let keys = try #require(bond["keys"] as? [String])
            #expect(keys.contains("peer_ltk") && !keys.contains("ltk"), "\(keys)")
            let stored = try #require(try BondFile.decode(try String(contentsOfFile: file, encoding: .utf8)).first)
            #expect(stored.peerKeys.ediv != nil && stored.peerKeys.rand?.count == 8)
        }
    }

    @Test("a damaged bond file: list, remove and pair fail naming it, and leave it byte for byte")
    func damagedFile() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bluewire = try ProcessRunner.bluewire
        for (name, content) in [("truncated.json", "{\"bluewire_bonds\": 1, \"bonds\": [{\"peer\": "),
                                ("badkey.json", "{\"bluewire_bonds\": 1, \"bonds\": [{\"peer\": \"01:02:03:04:05:06\", \"key_size\": 16, \"ltk\": \"00\"}]}")] {
            let file = directory.appendingPathComponent(name).path
            try Data(content.utf8).write(to: URL(fileURLWithPath: file))
            for arguments in [["bonds", "list", "--keys", file], ["bonds", "remove", "01:02:03:04:05:06", "--keys", file],
                              ["pair", "01:02:03:04:05:06", "--keys", file, "--transport", "tcp:127.0.0.1:1"]] {
                let result = try await ProcessRunner.run(bluewire, arguments)
                #expect(result.status == 1, "\(arguments)")
                #expect(result.standardError.hasPrefix("bluewire: bond file \(file) is damaged ("), "\(arguments): \(result.standardError)")
                #expect(result.standardError.hasSuffix("; it was left unchanged\n"), "\(result.standardError)")
                #expect(try String(contentsOfFile: file, encoding: .utf8) == content, "\(arguments) kept the file as it was")
            }
        }
    }

    @Test("the default path follows XDG_DATA_HOME, else HOME; a missing file lists no bonds")
    func defaultPathRule() async throws {
        let bluewire = try ProcessRunner.bluewire
        let cases: [([String: String], String)] = [
            (["XDG_DATA_HOME": "/nonexistent/data"], "/nonexistent/data/bluewire/keys.json"),
            (["XDG_DATA_HOME": "", "HOME": "/nonexistent/home"], "/nonexistent/home/.local/share/bluewire/keys.json"),
            (["XDG_DATA_HOME": "relative/data", "HOME": "/nonexistent/home"], "/nonexistent/home/.local/share/bluewire/keys.json"),
        ]
        for (environment, expected) in cases {
            let result = try await ProcessRunner.run(bluewire, ["bonds", "list", "--json"], environment: environment)
            #expect(result.status == 0, "stderr: \(result.standardError)")
            let object = try Self.jsonObject(result)
            #expect(object["file"] as? String == expected, "\(environment)")
            #expect(object["exists"] as? Bool == false)
            #expect((object["bonds"] as? [Any])?.isEmpty == true)
        }
        let text = try await ProcessRunner.run(bluewire, ["bonds", "list"], environment: ["XDG_DATA_HOME": "/nonexistent/data"])
        #expect(text.standardOutput == "no bonds: /nonexistent/data/bluewire/keys.json does not exist yet\n")
    }

    @Test("a bond file is one local identity: pair with another --own-address is refused, the file kept")
    func otherIdentityRefused() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("keys.json").path
        let bond = HostBond(
            peer: BluetoothAddress(value: 0xF9C3_24B4_A7BE, type: .random), secureConnections: true, authenticated: false,
            keySize: 16, longTermKey: Array(repeating: 0x11, count: 16), localKeys: DistributedKeys(), peerKeys: DistributedKeys())
        let content = BondFile.encode([bond], localAddress: BluetoothAddress(value: 0xC45A_1700_B10E, type: .random)) + "\n"
        try Data(content.utf8).write(to: URL(fileURLWithPath: file))
        let result = try await ProcessRunner.run(try ProcessRunner.bluewire, [
            "pair", "F9:C3:24:B4:A7:BE/random", "--keys", file, "--own-address", "C4:5A:17:00:B1:0F", "--transport", "tcp:127.0.0.1:1",
        ])
        #expect(result.status == 1)
        #expect(result.standardError.contains("holds the bonds of local address C4:5A:17:00:B1:0E/random"), "\(result.standardError)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == content)
    }
}
