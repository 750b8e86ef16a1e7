import Bluewire
import BluewireCore
import Foundation
import PeerTestSupport
import Testing

/// `bluewire gatt read|write` (the built binary, a process) against a bumble peripheral whose
/// characteristics need an encrypted or authenticated link (bumble's own permission checks answer
/// Insufficient Encryption / Authentication) and whose Security Manager is bumble's
/// (Tests/Peers/bumble_pairing.py): the command pairs on demand, says so on stderr, prints the value,
/// keeps the bond in `--keys` and encrypts with it next time, without pairing (and that session
/// replays from its capture).
@Suite("bluewire gatt pairs on demand against a bumble peripheral", .serialized)
struct GATTClientCLISecurityTests {
    static let database = #"""
    {"services": [{"uuid": "FFE0", "characteristics": [
      {"uuid": "FFE1", "properties": ["READ"], "permissions": "READABLE,READ_REQUIRES_ENCRYPTION", "value": "e1"},
      {"uuid": "FFE2", "properties": ["READ"], "permissions": "READABLE,READ_REQUIRES_AUTHENTICATION", "value": "e2"},
      {"uuid": "FFE3", "properties": ["READ", "WRITE"], "permissions": "READABLE,WRITEABLE,WRITE_REQUIRES_ENCRYPTION", "value": "00"}]}]}
    """#

    /// A bumble peripheral serving `database` with bumble's SMP configured as `pairing` (IO:SC:MITM).
    struct Peripheral {
        var peer: BumblePeer
        var events: BumbleEventLog
        var address: String
        var transport: String
        /// Value handles by characteristic UUID (0xFFE1...), from bumble's attribute table.
        var handles: [UInt16: String]

        static func start(pairing: String) async throws -> Peripheral {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("gatt-protected-\(UUID().uuidString.prefix(8)).json")
            try Data(GATTClientCLISecurityTests.database.utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let peer = try await BumblePeer.start([.tcp], arguments: [
                "--peripheral", "--name", "bumble-protected", "--interval", "50", "--gatt", file.path, "--pairing", pairing,
            ])
            let events = BumbleEventLog(peer.events)
            let table = try #require(await events.first { $0["database"] != nil }?["database"] as? [[String: Any]])
            var handles: [UInt16: String] = [:]
            for uuid: UInt16 in [0xFFE1, 0xFFE2, 0xFFE3] {
                let type = hexString(BluetoothUUID(uuid).attBytes)
                let handle = try #require(table.first { $0["type"] as? String == type }?["handle"] as? Int, "no \(type) in \(table)")
                handles[uuid] = "0x" + hex(UInt16(handle), width: 4)
            }
            return Peripheral(
                peer: peer, events: events, address: try #require(peer.ready.device?.address) + "/random",
                transport: peer.transports[0], handles: handles)
        }

        func gatt(_ arguments: [String]) -> [String] { ["gatt"] + arguments + ["--transport", transport] }

        func run(_ arguments: [String]) async throws -> ProcessResult {
            try await ProcessRunner.run(try ProcessRunner.bluewire, gatt(arguments), timeout: .seconds(30))
        }

        /// How many pairings bumble reported so far.
        var pairings: Int { events.events.filter { $0["paired"] != nil }.count }
    }

    static func keyFile() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("gatt-keys-\(UUID().uuidString.prefix(8)).json").path
    }

    @Test("SC Just Works on demand: read pairs and bonds; the next read and a protected write encrypt with the bond, no pairing")
    func justWorksThenBonded() async throws {
        let peripheral = try await Peripheral.start(pairing: "3:1:0")
        defer { peripheral.peer.stop() }
        let keys = Self.keyFile()
        defer { try? FileManager.default.removeItem(atPath: keys) }
        let encrypted = try #require(peripheral.handles[0xFFE1])

        let first = try await peripheral.run(["read", peripheral.address, encrypted, "--keys", keys, "--io", "no-input-no-output"])
        #expect(first.status == 0, "stderr: \(first.standardError)")
        #expect(first.standardOutput == "e1\n")
        #expect(first.standardError.contains("bluewire: paired with \(peripheral.address) (LE Secure Connections Just Works): encrypted, unauthenticated (level 2)"),
                "stderr: \(first.standardError)")
        #expect(await peripheral.events.first { $0["paired"] != nil } != nil, "bumble paired")
        let document = try BondFile.decodeDocument(try String(contentsOfFile: keys, encoding: .utf8))
        #expect(document.bonds.count == 1 && document.bonds.first?.peer.hexString == String(peripheral.address.prefix(17)))
        #expect(document.localAddress != nil)

        // Reconnecting with the same file: the address and the bond come from it, the link is encrypted
        // with the stored key (bumble sees encryption again) and nobody pairs.
        let capture = FileManager.default.temporaryDirectory.appendingPathComponent("gatt-bonded-\(UUID().uuidString.prefix(8)).btsnoop").path
        defer { try? FileManager.default.removeItem(atPath: capture) }
        let second = try await peripheral.run(["read", peripheral.address, encrypted, "--keys", keys, "--json", "--capture", capture])
        #expect(second.status == 0, "stderr: \(second.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(second.standardOutput.utf8)) as? [String: Any], "\(second.standardOutput)")
        #expect(object["value"] as? String == "e1")
        #expect(second.standardError.contains("encrypted with the stored bond (\(keys))"), "stderr: \(second.standardError)")
        #expect(!second.standardError.contains("paired with"))
        // The same session again with the capture as the controller (`bluewire replay`): byte for byte,
        // LE Enable Encryption with the stored key included.
        let replay = try await ProcessRunner.run(try ProcessRunner.bluewire, [
            "replay", capture, "--", "gatt", "read", peripheral.address, encrypted, "--keys", keys, "--json",
        ], timeout: .seconds(30))
        #expect(replay.status == 0, "stderr: \(replay.standardError)")
        #expect(replay.standardOutput == second.standardOutput)

        let write = try await peripheral.run(["write", peripheral.address, try #require(peripheral.handles[0xFFE3]), "c0ffee", "--keys", keys])
        #expect(write.status == 0, "stderr: \(write.standardError)")
        #expect(write.standardOutput == "wrote 3 bytes to \(try #require(peripheral.handles[0xFFE3])) (write request)\n")
        #expect(await peripheral.events.first { $0["write"] != nil && $0["value"] as? String == "c0ffee" } != nil, "bumble got the write")
        #expect(peripheral.pairings == 1, "one pairing in all: \(peripheral.events.events.filter { $0["paired"] != nil })")
        #expect(peripheral.events.events.filter { $0["encryption"] as? Int == 1 }.count >= 3, "encrypted on each of the three links")
    }

    @Test("SC Passkey Entry with --passkey (both sides type it): the authenticated read is answered; a wrong passkey fails by name")
    func passkeyEntry() async throws {
        // bumble KeyboardOnly with MITM; Bluewire KeyboardOnly: both type the same passkey (Core Vol 3
        // Part H table 2.8), bumble's from its standard input.
        let peripheral = try await Peripheral.start(pairing: "2:1:1")
        defer { peripheral.peer.stop() }
        let authenticated = try #require(peripheral.handles[0xFFE2])
        let keys = Self.keyFile()
        defer { try? FileManager.default.removeItem(atPath: keys) }

        let read = try PeripheralProcess("bluewire", peripheral.gatt([
            "read", peripheral.address, authenticated, "--keys", keys, "--io", "keyboard-only", "--passkey", "123456",
        ]))
        defer { read.stop() }
        #expect(await peripheral.events.first(timeout: .seconds(20)) { $0["passkey_wanted"] != nil } != nil, "bumble asked for the passkey")
        peripheral.peer.send(line: #"{"op": "passkey", "value": 123456}"#)
        #expect(await read.exitStatus(within: .seconds(30)) == 0, "stderr: \(read.standardError)")
        #expect(await read.lines.events == ["e2"])
        #expect(read.standardError.contains("(LE Secure Connections Passkey Entry): encrypted, authenticated, LE Secure Connections (level 4)"),
                "stderr: \(read.standardError)")

        // Another identity (a new bond file, so a new address) typing the wrong passkey.
        let otherKeys = Self.keyFile()
        defer { try? FileManager.default.removeItem(atPath: otherKeys) }
        let asked = peripheral.events.events.filter { $0["passkey_wanted"] != nil }.count
        let wrong = try PeripheralProcess("bluewire", peripheral.gatt([
            "read", peripheral.address, authenticated, "--keys", otherKeys, "--io", "keyboard-only", "--passkey", "111111",
        ]))
        defer { wrong.stop() }
        try await waitUntil(timeout: .seconds(20)) { peripheral.events.events.filter { $0["passkey_wanted"] != nil }.count > asked }
        peripheral.peer.send(line: #"{"op": "passkey", "value": 222222}"#)
        #expect(await wrong.exitStatus(within: .seconds(30)) == 1)
        let error = wrong.standardError
        #expect(error.hasPrefix("bluewire: \(peripheral.address): pairing failed: Confirm Value Failed"), "stderr: \(error)")
        #expect(error.split(separator: "\n").count == 1, "one line: \(error)")
        #expect(await wrong.lines.events.isEmpty, "no value printed")
        #expect(!FileManager.default.fileExists(atPath: otherKeys), "no bond saved")
    }

    @Test("SC Numeric Comparison with --yes: the authenticated read is answered, the comparison shown on stderr")
    func numericComparison() async throws {
        let peripheral = try await Peripheral.start(pairing: "1:1:1")
        defer { peripheral.peer.stop() }
        let keys = Self.keyFile()
        defer { try? FileManager.default.removeItem(atPath: keys) }
        let result = try await peripheral.run([
            "read", peripheral.address, try #require(peripheral.handles[0xFFE2]), "--keys", keys, "--io", "display-yes-no", "--yes",
        ])
        #expect(result.status == 0, "stderr: \(result.standardError)")
        #expect(result.standardOutput == "e2\n")
        let compared = try #require(await peripheral.events.first { $0["compare"] != nil }?["compare"] as? Int)
        #expect(result.standardError.contains("confirm the peripheral shows \(String(format: "%06d", compared)) (--yes)"), "stderr: \(result.standardError)")
        #expect(result.standardError.contains("(LE Secure Connections Numeric Comparison): encrypted, authenticated, LE Secure Connections (level 4)"),
                "stderr: \(result.standardError)")
        #expect(try BondFile.decodeDocument(try String(contentsOfFile: keys, encoding: .utf8)).bonds.first?.authenticated == true)
    }
}
