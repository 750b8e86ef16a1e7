import BluewireAnalysis
import BluewireSnoop
import Foundation
import PeerTestSupport
import Testing

/// `bluewire decode` run as a process, as users and scripts run it.
@Suite struct DecodeCommandTests {
    /// The `bluewire` executable SwiftPM built next to the test bundle.
    static var executable: URL? { BluewireExecutable.url }

    struct Run {
        var status: Int32
        var reason: Process.TerminationReason
        var stdout: String
        var stderr: String
    }

    static func run(_ arguments: [String]) throws -> Run {
        let binary = try #require(executable, "the bluewire executable was not built")
        let run = try ChildProcess.runBlocking(binary, arguments)
        return Run(status: run.status, reason: run.reason, stdout: run.standardOutput, stderr: run.standardError)
    }

    static func temporaryFile(_ bytes: [UInt8]) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("bluewire-decode-\(UUID().uuidString)")
        try Data(bytes).write(to: url)
        return url
    }

    @Test func summaryPrintsTheCountsObject() throws {
        let path = AnalysisFixtures.captures.appendingPathComponent("horizon_treadmill_notify.btsnoop_hci.log").path
        let result = try Self.run(["decode", path, "--summary", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(json["frames"] as? Int == 2572)
        #expect(json["att_frames"] as? Int == 1659)
    }

    @Test func jsonPrintsOneLinePerRecord() throws {
        let path = AnalysisFixtures.captures.appendingPathComponent("darkelf_att_only_h4.pcapng").path
        let result = try Self.run(["decode", path, "--json"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 122)
        #expect(lines.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil })
    }

    @Test func truncatedFilePrintsEveryRecordThenOneErrorLine() throws {
        let bytes = AnalysisFixtures.bytes("horizon_treadmill_notify.btsnoop_hci.log")
        let url = try Self.temporaryFile(Array(bytes.dropLast(7)))
        defer { try? FileManager.default.removeItem(at: url) }
        let result = try Self.run(["decode", url.path])
        #expect(result.reason == .exit && result.status != 0)
        #expect(result.stdout.split(separator: "\n").count == 2571)
        let errorLines = result.stderr.split(separator: "\n")
        #expect(errorLines.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("record 2571 at offset"), "\(result.stderr)")
    }

    @Test(arguments: [
        ("missing", nil as [UInt8]?),
        ("not a capture", Array("hello, world! this is text".utf8)),
        ("empty", []),
        ("bad version", Array("btsnoop".utf8) + [0, 0, 0, 0, 9, 0, 0, 3, 0xEA]),
    ])
    func badFilesGiveOneErrorLineAndNonZeroStatus(_ label: String, _ bytes: [UInt8]?) throws {
        let url: URL
        if let bytes {
            url = try Self.temporaryFile(bytes)
        } else {
            url = URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString).log")
        }
        defer { try? FileManager.default.removeItem(at: url) }
        for flags in [[], ["--json"], ["--summary"]] {
            let result = try Self.run(["decode", url.path] + flags)
            #expect(result.reason == .exit, "\(label) \(flags): terminated by a signal")
            #expect(result.status != 0, "\(label) \(flags)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(label) \(flags): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(label) \(flags)")
        }
    }

    @Test func summaryWithoutJSONIsATable() throws {
        let path = AnalysisFixtures.captures.appendingPathComponent("horizon_treadmill_notify.btsnoop_hci.log").path
        let result = try Self.run(["decode", path, "--summary"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
        #expect(lines.contains("frames 2572"), "\(result.stdout)")
        #expect(lines.contains("0x1b Handle Value Notification 1047"), "\(result.stdout)")
    }

    @Test func truncatedSummaryCountsEveryCompleteRecordAndSaysWhereTheFileEnds() throws {
        let bytes = AnalysisFixtures.bytes("horizon_treadmill_notify.btsnoop_hci.log")
        let url = try Self.temporaryFile(Array(bytes.dropLast(7)))
        defer { try? FileManager.default.removeItem(at: url) }
        let json = try Self.run(["decode", url.path, "--summary", "--json"])
        #expect(json.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["frames"] as? Int == 2571)
        let truncated = try #require(object["truncated"] as? [String: Any])
        #expect(truncated["record_index"] as? Int == 2571)
        #expect((truncated["offset"] as? Int ?? 0) > 0)
        #expect((truncated["reason"] as? String)?.contains("truncated") == true)
        let text = try Self.run(["decode", url.path, "--summary"])
        #expect(text.status == 1)
        #expect(text.stdout.contains("truncated: record 2571 at offset"), "\(text.stdout)")
        #expect(text.stderr.split(separator: "\n").count == 1)
    }

    @Test func dashReadsStandardInputAndFiltersSelectRecords() throws {
        let path = AnalysisFixtures.captures.appendingPathComponent("horizon_treadmill_notify.btsnoop_hci.log").path
        let binary = try #require(Self.executable)
        let run = try ChildProcess.runBlocking(
            binary, ["decode", "-", "--kind", "command", "--time", "delta"], input: URL(fileURLWithPath: path))
        let stdout = run.standardOutput
        #expect(run.status == 0)
        let lines = stdout.split(separator: "\n")
        #expect(lines.count == 95)
        #expect(lines.allSatisfy { $0.contains(" < HCI Command: ") })
        let reset = try Self.run(["decode", path, "--opcode", "0x0c03"])
        #expect(reset.stdout.split(separator: "\n").count == 2, "\(reset.stdout)")
        let att = try Self.run(["decode", path, "--cid", "0x0004", "--json"])
        #expect(att.stdout.split(separator: "\n").count == 1659)
        let verbose = try Self.run(["decode", path, "-v", "--opcode", "0x1009"])
        #expect(verbose.stdout.contains("\n        address: "), "\(verbose.stdout)")
        let bad = try Self.run(["decode", path, "--handle", "zz"])
        #expect(bad.status != 0)
    }
}
