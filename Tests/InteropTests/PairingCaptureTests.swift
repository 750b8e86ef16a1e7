import Foundation
import PeerTestSupport
import Testing

/// The committed pairing captures (`Captures/bluewire_pair_*.btsnoop`, recorded by
/// `scripts/record-pairing-captures.py`: `bluewire pair --capture` against bumble's Security Manager, one
/// per method): tshark decodes them with no malformed frame and counts the same SMP frames as
/// `bluewire decode --summary`, `decode` names every SMP PDU and its fields, and `analyze` infers the
/// method each was recorded with.
@Suite("pairing captures: tshark, decode and analyze agree")
struct PairingCaptureTests {
    struct Recorded: Sendable, CustomTestStringConvertible {
        var name: String
        var secureConnections: Bool
        var method: String
        var passkeyEntry: String?
        var level: Int
        /// SMP PDUs the exchange has: SC 2 features + 2 public keys + 1 or 20 confirm/random rounds
        /// (Passkey Entry: one per passkey bit) + 2 DHKey checks + the keys; legacy 2 + 4 + the keys.
        var smpFrames: Int
        var testDescription: String { name }

        var path: String { BumblePeer.repositoryRoot.appendingPathComponent("Captures/bluewire_pair_\(name).btsnoop").path }
    }

    /// What each capture was recorded with (the METHODS table of the script).
    static let captures: [Recorded] = [
        Recorded(name: "sc_just_works", secureConnections: true, method: "just_works", level: 2, smpFrames: 11),
        Recorded(name: "sc_numeric_comparison", secureConnections: true, method: "numeric_comparison", level: 4, smpFrames: 11),
        Recorded(name: "sc_passkey_bluewire_displays", secureConnections: true, method: "passkey_entry", passkeyEntry: "local_displays", level: 4, smpFrames: 88),
        Recorded(name: "sc_passkey_bluewire_enters", secureConnections: true, method: "passkey_entry", passkeyEntry: "peer_displays", level: 4, smpFrames: 88),
        Recorded(name: "legacy_just_works", secureConnections: false, method: "just_works", level: 2, smpFrames: 12),
        Recorded(name: "legacy_passkey", secureConnections: false, method: "passkey_entry", passkeyEntry: "peer_displays", level: 3, smpFrames: 12),
    ]

    /// Lines of `tshark -r FILE -Y FILTER` (one per matching frame).
    static func tsharkFrames(_ path: String, filter: String) async throws -> Int {
        let tshark = try #require(TsharkCounts.tshark, "tshark is not installed (scripts/setup-test-env.sh installs it)")
        let result = try await ProcessRunner.run(tshark, ["-n", "-r", path, "-Y", filter])
        try #require(result.status == 0, "tshark -Y \(filter): \(result.standardError)")
        return result.outputLines.count
    }

    @Test("tshark counts the SMP frames bluewire decode --summary counts, and flags no frame malformed", arguments: captures)
    func smpCountsAgree(_ capture: Recorded) async throws {
        try #require(FileManager.default.fileExists(atPath: capture.path), "\(capture.path) is missing")
        let smp = try await Self.tsharkFrames(capture.path, filter: "btsmp")
        #expect(smp == capture.smpFrames, "the SMP exchange of the method")
        #expect(try await Self.tsharkFrames(capture.path, filter: "btsmp && _ws.malformed") == 0, "tshark flags SMP frames malformed")
        #expect(try await Self.tsharkFrames(capture.path, filter: "hci_h4.direction == 0 && _ws.malformed") == 0,
                "tshark flags Bluewire's own packets malformed")
        // The one frame tshark does flag is bumble's controller answering LE Set Data Length (0x2022) with a
        // bare status (Unknown HCI Command) where tshark expects the handle too: not Bluewire's, not SMP.
        let malformed = try await Self.tsharkFrames(capture.path, filter: "_ws.malformed")
        let bumbleDataLength = try await Self.tsharkFrames(capture.path, filter: "_ws.malformed && bthci_evt.opcode == 0x2022")
        #expect(malformed == bumbleDataLength, "malformed frames besides bumble's LE Set Data Length answer")
        let summary = try await ProcessRunner.run(try ProcessRunner.bluewire, ["decode", "--summary", "--json", capture.path])
        #expect(summary.status == 0, "\(summary.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(summary.standardOutput.utf8)) as? [String: Any])
        #expect(object["smp_frames"] as? Int == smp, "bluewire \(object["smp_frames"] ?? "nil"), tshark \(smp)")
        // The rest of the per-kind counts as well (frames, commands, events, ACL, LE subevents).
        try await expectCaptureAgreesWithTshark(capture.path)
    }

    @Test("decode names every SMP PDU and its fields; keys as hex", arguments: captures)
    func decodeNamesSMPFields(_ capture: Recorded) async throws {
        let result = try await ProcessRunner.run(try ProcessRunner.bluewire, ["decode", "--json", capture.path])
        #expect(result.status == 0, "\(result.standardError)")
        let smp = try result.outputLines.compactMap { line -> [String: Any]? in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return (object["summary"] as? String)?.contains("SMP ") == true ? object : nil
        }
        #expect(smp.count == (try await Self.tsharkFrames(capture.path, filter: "btsmp")))
        for object in smp {
            #expect(object["error"] == nil, "\(object)")
            #expect((object["summary"] as? String)?.contains("Unknown") == false, "\(object)")
        }
        let request = try #require(smp.first { ($0["summary"] as? String)?.contains("SMP Pairing Request") == true })
        #expect((request["io_capability"] as? String)?.hasSuffix(")") == true, "\(request)")
        #expect((request["auth_req"] as? String)?.contains(capture.secureConnections ? "SC" : "bonding") == true, "\(request)")
        // LE Secure Connections distributes no LTK (both derive it); legacy pairing does.
        let keyFields = ["confirm_value", "random_value", "identity_resolving_key"] + (capture.secureConnections ? [] : ["long_term_key"])
        for name in keyFields {
            let values = smp.compactMap { $0[name] as? String }
            #expect(!values.isEmpty, "no \(name) in \(capture.name)")
            #expect(values.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) }, "\(name): \(values)")
        }
        if capture.secureConnections {
            #expect(smp.contains { ($0["public_key_x"] as? String)?.count == 64 }, "public keys as hex")
            #expect(smp.contains { ($0["dhkey_check"] as? String)?.count == 32 }, "DHKey checks as hex")
        } else {
            #expect(smp.contains { $0["ediv"] != nil && $0["rand"] != nil }, "Central Identification")
        }
    }

    @Test("analyze infers the method the capture was recorded with, the keys and the level", arguments: captures)
    func analyzeInfersTheMethod(_ capture: Recorded) async throws {
        let result = try await ProcessRunner.run(try ProcessRunner.bluewire, ["analyze", "--json", capture.path])
        #expect(result.status == 0, "\(result.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        expectSnakeCaseKeys(object)
        let connection = try #require((object["connections"] as? [[String: Any]])?.first)
        #expect(connection["encrypted"] as? Bool == true)
        #expect(connection["security_level"] as? Int == capture.level)
        let pairing = try #require((connection["pairings"] as? [[String: Any]])?.first)
        #expect(pairing["initiator"] as? String == "local")
        #expect(pairing["secure_connections"] as? Bool == capture.secureConnections)
        #expect(pairing["method"] as? String == capture.method)
        #expect(pairing["passkey_entry"] as? String == capture.passkeyEntry)
        #expect(pairing["key_size"] as? Int == 16)
        #expect(pairing["bonding"] as? Bool == true)
        #expect(pairing["failed"] is NSNull)
        let keys = try #require(pairing["keys_distributed"] as? [String: [String]])
        // bumble as responder distributes its identity (IRK + address) and, for legacy, its LTK with EDIV/Rand.
        let peer = keys["peer"] ?? []
        #expect(peer.contains("irk") && peer.contains("identity_address"), "\(keys)")
        #expect(peer.contains("ltk") == !capture.secureConnections, "legacy: the peer's LTK; SC: none distributed: \(keys)")
        let text = try await ProcessRunner.run(try ProcessRunner.bluewire, ["analyze", capture.path])
        #expect(text.standardOutput.contains("security level \(capture.level) ("), "\(text.standardOutput)")
        #expect(text.standardOutput.contains("  pairing (record "), "\(text.standardOutput)")
    }
}
