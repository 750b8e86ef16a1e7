import Foundation
import PeerTestSupport
import Testing
@testable import BluewireSnoop

/// The real captures in the repository's `Captures/` directory and their tshark counts from `INDEX.json`.
enum CaptureFixtures {
    /// The repository root, found from this file's path (Tests/BluewireSnoopTests/CaptureFixtures.swift).
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let directory = root.appendingPathComponent("Captures")

    struct Entry: Sendable, CustomStringConvertible {
        var file: String
        var datalink: Int
        var container: String
        var frames: Int
        var malformedFrames: Int
        var h4TypeHistogram: [String: Int]
        var flagsHistogram: [String: Int]
        var description: String { file }
    }

    static let index: [Entry] = {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent("INDEX.json")),
              let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let files = json["files"] as? [[String: Any]] else { return [] }
        return files.compactMap { file in
            guard let name = file["file"] as? String, let tshark = file["tshark"] as? [String: Any] else { return nil }
            let structure = file["btsnoop_structure"] as? [String: Any]
            return Entry(
                file: name, datalink: file["datalink"] as? Int ?? 0, container: file["container"] as? String ?? "",
                frames: tshark["frames"] as? Int ?? -1, malformedFrames: tshark["malformed_frames"] as? Int ?? 0,
                h4TypeHistogram: structure?["h4_type_hist"] as? [String: Int] ?? [:],
                flagsHistogram: structure?["flags_hist"] as? [String: Int] ?? [:])
        }
    }()

    static var names: [String] { index.map(\.file) }

    static func entry(_ name: String) -> Entry? { index.first { $0.file == name } }

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    /// Reads `bytes` fed in chunks of `chunkSize`, as a file reader would.
    static func readStreaming(_ bytes: [UInt8], chunkSize: Int) -> (records: [CaptureRecord], error: CaptureError?) {
        var reader = CaptureReader()
        var records: [CaptureRecord] = []
        var start = 0
        repeat {
            let end = min(start + chunkSize, bytes.count)
            // A fresh array per chunk, as a file reader that reuses no storage would hand over.
            reader.feed(Array(bytes[start..<end]))
            start = end
            if start == bytes.count { reader.finishInput() }
            do {
                while let record = try reader.next() { records.append(record) }
            } catch {
                return (records, error)
            }
        } while start < bytes.count
        return (records, nil)
    }
}

/// A small seeded generator so random cuts and corruptions are reproducible.
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

/// Runs a tool found on PATH; nil if it is not installed.
func runTool(_ name: String, _ arguments: [String]) throws -> String? {
    guard let tool = ChildProcess.which(name) else { return nil }
    return try ChildProcess.runBlocking(tool, arguments).standardOutput
}

/// Whether a missing external tool must fail the test (in CI) rather than skip it.
var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }
