import BluewireCore
import BluewireSnoop
import Foundation
import HostTestSupport
import Testing

/// Every capture in `Captures/` that a `bluewire` command recorded (`--capture`) replays with that
/// command (`bluewire replay FILE -- COMMAND`), strictly: a capture left behind by a change of the
/// host's bring-up fails here, not in front of a user. A mismatch anywhere, bring-up included, is
/// reported as the record, the expected and the actual packet.
@Suite("bluewire replay: the bundled captures of bluewire commands")
struct ReplayBundledCapturesTests {
    /// The captures a `bluewire` command recorded, and how each is replayed by its own suite (or here).
    static let replayedElsewhere: [String: String] = [
        "bluewire_scan_bumble.btsnoop": "ReplayScanCommandTests (scan --duration 1)",
        "bluewire_gatt_cli_mtu_timeout.btsnoop": "ReplayGATTTimeoutCommandTests (gatt read)",
        "bumble_serve_session.btsnoop": "ReplayServeCommandTests (serve --db)",
    ]
    static let replayedHere = ["bluewire_gatt_cli_dump.btsnoop", "bluewire_l2cap_coc_echo.btsnoop"]
    /// Recorded by a command that cannot replay, and why.
    static let notReplayable: [String: String] = [
        "bluewire_pair_": "pair: the pairing's random values and key pair are new on every run, so no run matches a capture",
    ]
    /// Recorded by library sessions (`BluetoothHost`), replayed by their own tests, not by a command.
    static let librarySessions = [
        "bluewire_gatt_dump.btsnoop", "bluewire_gatt_long_read_write.btsnoop", "bluewire_gatt_notify.btsnoop",
        "bluewire_gatt_indicate.btsnoop", "bluewire_gatt_disconnect_mid_read.btsnoop",
    ]

    @Test("every bluewire-recorded capture is replayed by a test, or named as not replayable with the reason")
    func everyCommandCaptureIsCovered() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: ReplayFixtures.captures.path)
        for name in names where name.hasPrefix("bluewire_") || name == "bumble_serve_session.btsnoop" {
            let covered = Self.replayedElsewhere[name] != nil || Self.replayedHere.contains(name)
                || Self.librarySessions.contains(name) || Self.notReplayable.keys.contains { name.hasPrefix($0) }
            #expect(covered, "\(name): recorded by Bluewire, but no test replays it")
        }
    }

    /// The peer the capture's host connected to (LE Create Connection, or LE Extended Create
    /// Connection, Core Vol 4 Part E §7.8.12, §7.8.66), as the command takes it.
    static func recordedPeer(_ name: String) throws -> String {
        let packets = try [UInt8](Data(contentsOf: ReplayFixtures.captures.appendingPathComponent(name)))
        for record in CaptureReader.readAll(packets).records {
            guard record.direction == .hostToController, let packet = record.packet, packet.type == .command else { continue }
            let p = Array(packet.payload)
            guard p.count > 3 else { continue }
            let opcode = UInt16(p[0]) | UInt16(p[1]) << 8
            let at: Int
            switch opcode {
            case 0x200D: at = 3 + 5
            case 0x2043: at = 3 + 2
            default: continue
            }
            let address = p[(at + 1)..<(at + 7)].reversed().map { String(format: "%02X", $0) }.joined(separator: ":")
            return address + (p[at] == 0 ? "" : "/random")
        }
        throw CaptureReplayError("\(name) holds no LE Create Connection")
    }

    struct CaptureReplayError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    @Test("gatt dump replays from its capture: the same database, printed as JSON")
    func gattDumpReplays() async throws {
        let capture = ReplayFixtures.captures.appendingPathComponent("bluewire_gatt_cli_dump.btsnoop").path
        let peer = try Self.recordedPeer("bluewire_gatt_cli_dump.btsnoop")
        let run = try await ReplayServeCommandTests.start(["replay", capture, "--", "gatt", "dump", peer, "--json"]).finish(.seconds(60))
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stderr.isEmpty, "stderr: \(run.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.joined(separator: "\n").utf8)) as? [String: Any])
        #expect(object["peer"] as? String == peer)
        let attributes = try #require(object["attributes"] as? [[String: Any]])
        #expect(attributes.count > 20, "the whole GATTInteropDatabase: \(attributes.count) attributes")
    }

    @Test("l2cap send --echo replays from its capture: 12 SDUs of 300 octets each way")
    func l2capSendReplays() async throws {
        let capture = ReplayFixtures.captures.appendingPathComponent("bluewire_l2cap_coc_echo.btsnoop").path
        let peer = try Self.recordedPeer("bluewire_l2cap_coc_echo.btsnoop")
        let run = try await ReplayServeCommandTests.start([
            "replay", capture, "--", "l2cap", "send", peer, "--psm", "0x80", "--count", "12", "--length", "300", "--echo",
        ]).finish(.seconds(60))
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stderr.isEmpty, "stderr: \(run.stderr)")
        #expect(run.stdout.contains { $0.contains("echoed 12/12, 12 intact") }, "stdout: \(run.stdout)")
    }

    @Test("a capture whose bring-up differs from the command's is reported at that record, with both packets, not as a failed bring-up")
    func bringUpMismatchNamesTheRecord() async throws {
        let name = "bluewire_gatt_cli_dump.btsnoop"
        var bytes = try [UInt8](Data(contentsOf: ReplayFixtures.captures.appendingPathComponent(name)))
        // Alter the capture's LE Set Event Mask (0x2001, Core Vol 4 Part E §7.8.1), a bring-up command:
        // the host's will differ in its last octet.
        let (records, _) = CaptureReader.readAll(bytes)
        let record = try #require(records.first { record in
            guard record.direction == .hostToController, let packet = record.packet, packet.type == .command else { return false }
            return packet.payload.count == 11 && packet.payload.starts(with: [0x01, 0x20, 0x08])
        })
        let last = record.offset + 24 + record.data.count - 1
        let recorded = bytes[last]
        bytes[last] ^= 0x80
        let altered = FileManager.default.temporaryDirectory.appendingPathComponent("bringup-\(UUID().uuidString.prefix(8)).btsnoop")
        try Data(bytes).write(to: altered)
        defer { try? FileManager.default.removeItem(at: altered) }

        let peer = try Self.recordedPeer(name)
        let run = try await ReplayServeCommandTests.start(["replay", altered.path, "--", "gatt", "dump", peer]).finish(.seconds(60))
        #expect(run.status == 1)
        #expect(run.stdout.isEmpty)
        let lines = run.stderr.split(separator: "\n")
        #expect(lines.count == 1, "one line: \(run.stderr)")
        let line = String(lines.first ?? "")
        #expect(line.hasPrefix("bluewire: replay mismatch at record \(record.index): the host sent different bytes"), "stderr: \(run.stderr)")
        let expected = String(format: "%02x", recorded ^ 0x80), actual = String(format: "%02x", recorded)
        #expect(line.contains("; expected 01 01 20 08 ") && line.contains(" \(expected); actual 01 01 20 08 ") && line.hasSuffix(" \(actual)"),
                "stderr: \(run.stderr)")
    }
}
