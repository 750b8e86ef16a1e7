import BluewireAnalysis
import BluewireGATT
import Foundation
import Testing

/// `bluewire analyze` run as a process, as users and scripts run it.
@Suite("bluewire analyze")
struct AnalyzeCommandTests {
    static let horizon = AnalysisFixtures.captures.appendingPathComponent("horizon_treadmill_notify.btsnoop_hci.log").path

    @Test("--json prints one object whose ATT opcode counts equal tshark's")
    func jsonReport() throws {
        let run = try DecodeCommandTests.run(["analyze", "--json", Self.horizon])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let connections = try #require(object["connections"] as? [[String: Any]])
        #expect(connections.count == 1)
        #expect(connections.first?["peer"] as? String == "FA:E4:E3:24:20:09/random")
        let expected = AnalysisFixtures.tshark["horizon_treadmill_notify.btsnoop_hci.log"]?["att_opcode_hist"] as? [String: Int]
        #expect(object["att_opcodes"] as? [String: Int] == expected)
        let servers = try #require(connections.first?["servers"] as? [[String: Any]])
        let services = try #require(servers.first?["services"] as? [[String: Any]])
        #expect(services.compactMap { $0["name"] as? String }.contains("Fitness Machine"))
    }

    @Test("the text report names services and shows per-characteristic counters")
    func textReport() throws {
        let run = try DecodeCommandTests.run(["analyze", Self.horizon])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stdout.contains("peer FA:E4:E3:24:20:09/random, local central"))
        #expect(run.stdout.contains("Primary Service 0x1826 (Fitness Machine)"))
        let row = run.stdout.split(separator: "\n").first { $0.contains("0x0014") && $0.contains("Value") }
        let columns = row?.split(separator: " ").map(String.init) ?? []
        #expect(columns.contains("786"), "notification count of 0x0014 in: \(row ?? "no row")")
    }

    @Test("--export-db writes <address>.json that the database loader accepts")
    func exportDatabase() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluewire-analyze-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try DecodeCommandTests.run(["analyze", Self.horizon, "--export-db", directory.path])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files == ["FA-E4-E3-24-20-09-random.json"])
        let text = try String(contentsOf: directory.appendingPathComponent(files.first ?? ""), encoding: .utf8)
        let database = try GATTDatabase(json: text)
        #expect(database.attributes.filter { $0.type == .primaryService }.count == 5)
        #expect(database.characteristics.count == 26)
    }

    @Test("a BR/EDR link shows no ATT MTU: none in the text, null in JSON")
    func brEdrLinkHasNoATTMTU() throws {
        let path = AnalysisFixtures.captures.appendingPathComponent("happyleaf_classic_spp_large.btsnoop_hci.log").path
        let text = try DecodeCommandTests.run(["analyze", path])
        #expect(text.status == 0, "stderr: \(text.stderr)")
        #expect(text.stdout.contains(", BR/EDR, peer "))
        #expect(!text.stdout.contains("ATT MTU"), "\(text.stdout)")
        let json = try DecodeCommandTests.run(["analyze", "--json", path])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let connection = try #require((object["connections"] as? [[String: Any]])?.first)
        #expect(connection["transport"] as? String == "BR/EDR")
        #expect(connection.keys.contains("att_mtu") && connection["att_mtu"] is NSNull, "\(connection["att_mtu"] ?? "absent")")
    }

    @Test("values show as text when they are valid UTF-8 without control characters")
    func valueText() {
        #expect(CaptureAnalysis.printableUTF8(Array("Grüße 🙂".utf8)) == "Grüße 🙂")
        #expect(CaptureAnalysis.printableUTF8([0x01, 0x41]) == nil, "a control character")
        #expect(CaptureAnalysis.printableUTF8([0xC2, 0x85]) == nil, "a C1 control character")
        #expect(CaptureAnalysis.printableUTF8([0x41, 0xC3]) == nil, "not valid UTF-8")
    }

    @Test("a missing file fails with status 1 and one line on stderr")
    func missingFile() throws {
        let run = try DecodeCommandTests.run(["analyze", "/nonexistent/capture.log"])
        #expect(run.status == 1)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.hasPrefix("bluewire analyze: ") && run.stderr.filter { $0 == "\n" }.count == 1)
    }

    @Test("a capture cut inside a record is analyzed up to the cut, then fails with status 1")
    func truncatedCapture() throws {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: Self.horizon)))
        let file = try DecodeCommandTests.temporaryFile(Array(bytes.dropLast(5)))
        defer { try? FileManager.default.removeItem(at: file) }
        let run = try DecodeCommandTests.run(["analyze", "--json", file.path])
        #expect(run.status == 1)
        let object = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        #expect(object?["records"] as? Int == 2571)
        #expect(run.stderr.contains("record 2571"))
    }
}
