import Foundation
import Testing

/// What tshark (Wireshark's dissectors, Docs/Testing.md, "tshark") makes of a capture file: the per-kind counts
/// that `bluewire decode --summary` also reports, and which frames it flags as malformed.
struct TsharkCounts: Sendable {
    struct Frame: Sendable {
        var h4Type: Int?
        /// 0 host→controller ("sent"), 1 controller→host ("rcvd").
        var direction: Int?
        var leSubevent: Int?
        var numReports: Int
        var malformed: Bool
    }

    var frames: [Frame]

    static var tshark: URL? { ProcessRunner.which("tshark") }

    /// Runs tshark once over `path`, one line of fields per frame.
    static func read(_ path: String) async throws -> TsharkCounts {
        let tshark = try #require(tshark, "tshark is not installed (scripts/setup-test-env.sh installs it)")
        let fields = ["hci_h4.type", "hci_h4.direction", "bthci_evt.le_meta_subevent", "bthci_evt.le_num_reports", "_ws.malformed"]
        let result = try await ProcessRunner.run(
            tshark, ["-n", "-r", path, "-T", "fields", "-E", "occurrence=f"] + fields.flatMap { ["-e", $0] })
        try #require(result.status == 0, "tshark failed: \(result.standardError)")
        func number(_ text: Substring) -> Int? {
            text.hasPrefix("0x") ? Int(text.dropFirst(2), radix: 16) : Int(text)
        }
        let frames = result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { line in
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false)
            func column(_ index: Int) -> Substring { index < columns.count ? columns[index] : "" }
            return Frame(h4Type: number(column(0)), direction: number(column(1)), leSubevent: number(column(2)),
                         numReports: number(column(3)) ?? 0, malformed: !column(4).isEmpty)
        }
        return TsharkCounts(frames: frames)
    }

    func count(_ predicate: (Frame) -> Bool) -> Int { frames.filter(predicate).count }

    /// The keys of `CaptureSummary` that a scan session exercises, as tshark counts them.
    var summary: [String: Int] {
        [
            "frames": frames.count,
            "hci_cmd_frames": count { $0.h4Type == 1 },
            "hci_acl_frames": count { $0.h4Type == 2 },
            "hci_evt_frames": count { $0.h4Type == 4 },
            "le_adv_report_frames": count { $0.leSubevent == 0x02 },
            "le_adv_reports_total": frames.filter { $0.leSubevent == 0x02 }.map(\.numReports).reduce(0, +),
            "le_ext_adv_report_frames": count { $0.leSubevent == 0x0D },
            "le_ext_adv_reports_total": frames.filter { $0.leSubevent == 0x0D }.map(\.numReports).reduce(0, +),
        ]
    }

    /// `{"0x02": n, ...}` as in `CaptureSummary.le_meta_subevent_hist`.
    var leMetaSubeventHistogram: [String: Int] {
        var histogram: [String: Int] = [:]
        for frame in frames {
            guard let subevent = frame.leSubevent else { continue }
            histogram["0x" + String(format: "%02x", subevent), default: 0] += 1
        }
        return histogram
    }
}

/// Checks a Bluewire-recorded scan capture against tshark and `bluewire decode`.
func expectCaptureAgreesWithTshark(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let tshark = try await TsharkCounts.read(path)
    #expect(tshark.frames.count > 10, "too few frames in \(path)", sourceLocation: sourceLocation)
    let malformedOwn = tshark.count { $0.malformed && $0.direction == 0 }
    #expect(malformedOwn == 0, "tshark flags \(malformedOwn) of Bluewire's own packets as malformed", sourceLocation: sourceLocation)
    #expect(tshark.count { $0.direction == 0 && $0.h4Type == 1 } > 5, "Bluewire's commands are missing", sourceLocation: sourceLocation)

    let binary = try ProcessRunner.bluewire
    let summary = try await ProcessRunner.run(binary, ["decode", "--summary", "--json", path])
    #expect(summary.status == 0, "bluewire decode --summary: \(summary.standardError)", sourceLocation: sourceLocation)
    let object = try #require(try JSONSerialization.jsonObject(with: Data(summary.standardOutput.utf8)) as? [String: Any])
    for (key, expected) in tshark.summary.sorted(by: { $0.key < $1.key }) {
        #expect(object[key] as? Int == expected, "\(key): bluewire \(object[key] ?? "nil"), tshark \(expected)", sourceLocation: sourceLocation)
    }
    #expect(object["le_meta_subevent_hist"] as? [String: Int] == tshark.leMetaSubeventHistogram, sourceLocation: sourceLocation)

    let text = try await ProcessRunner.run(binary, ["decode", path])
    #expect(text.status == 0, "bluewire decode: \(text.standardError)", sourceLocation: sourceLocation)
    #expect(text.outputLines.count == tshark.frames.count, "one decoded line per frame", sourceLocation: sourceLocation)
}
