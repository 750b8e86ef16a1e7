import BluewireAnalysis
import BluewireSnoop
import Foundation

/// The real captures in the repository's `Captures/` directory and the tshark counts in its `INDEX.json`.
enum AnalysisFixtures {
    /// The repository root, from this file's path (Tests/BluewireAnalysisTests/AnalysisFixtures.swift).
    static let captures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Captures")

    /// file name → the `tshark` object of INDEX.json (parsed on each call: `Any` is not Sendable).
    static var tshark: [String: [String: Any]] {
        guard let data = try? Data(contentsOf: captures.appendingPathComponent("INDEX.json")),
              let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let files = json["files"] as? [[String: Any]] else { return [:] }
        var out: [String: [String: Any]] = [:]
        for file in files {
            if let name = file["file"] as? String, let counts = file["tshark"] as? [String: Any] { out[name] = counts }
        }
        return out
    }

    static var names: [String] { tshark.keys.sorted() }

    static func bytes(_ name: String) -> [UInt8] {
        (try? [UInt8](Data(contentsOf: captures.appendingPathComponent(name)))) ?? []
    }

    /// Every capture's summary, computed once for all the tests that compare keys.
    static let summaries: [String: CaptureSummary] = {
        var out: [String: CaptureSummary] = [:]
        for name in names {
            var summary = CaptureSummary()
            for record in CaptureReader.readAll(bytes(name)).records { summary.add(record) }
            out[name] = summary
        }
        return out
    }()
}

/// A small seeded generator so corruptions are reproducible from the seed in a failure message.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
