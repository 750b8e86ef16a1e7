import Benchmark
import BluewireAnalysis
import BluewireCore
import BluewireHCI
import BluewireSnoop
import Foundation

/// Full decode of real captures: btsnoop reader → per-kind counts (what `bluewire decode --summary`
/// does), and reader → btmon-style text. Each iteration decodes the whole file from memory, so
/// packets/s = records × iterations/s, and allocations per packet = mallocs / records.
let capturesDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Captures")

func load(_ name: String) -> [UInt8] {
    (try? [UInt8](Data(contentsOf: capturesDirectory.appendingPathComponent(name)))) ?? []
}

func summarize(_ bytes: [UInt8]) -> CaptureSummary {
    var reader = CaptureReader()
    reader.feed(bytes)
    reader.finishInput()
    var summary = CaptureSummary()
    while let record = try? reader.next() { summary.add(record) }
    return summary
}

/// Every record of `bytes` described and written as `decode --json` or `decode -v` writes it (into
/// one output buffer, emptied as the CLI's is when it reaches 64 KiB); the total length written.
func describeAll(_ bytes: [UInt8], json: Bool) -> Int {
    var reader = CaptureReader()
    reader.feed(bytes)
    reader.finishInput()
    var describer = PacketDescriber()
    var output: [UInt8] = []
    output.reserveCapacity(1 << 16)
    var total = 0
    while let record = try? reader.next() {
        let description = describer.description(of: record)
        if json {
            description.appendJSON(to: &output)
        } else {
            output.append(contentsOf: description.tree.utf8)
        }
        output.append(UInt8(ascii: "\n"))
        if output.count >= 1 << 16 {
            total &+= output.count
            output.removeAll(keepingCapacity: true)
        }
    }
    return total &+ output.count
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .instructions, .peakMemoryResident],
        maxDuration: .seconds(5), maxIterations: 200)

    for name in ["happyleaf_classic_spp_large.btsnoop_hci.log", "ec521_miband2_scan_pairing.btsnoop_hci.log"] {
        let bytes = load(name)
        let records = summarize(bytes).frames
        Benchmark("summary \(name) (\(records) records, \(bytes.count) bytes)") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(summarize(bytes))
            }
        }
    }

    let scan = load("ec521_miband2_scan_pairing.btsnoop_hci.log")
    Benchmark("describe ec521 (text lines)") { benchmark in
        for _ in benchmark.scaledIterations {
            var reader = CaptureReader()
            reader.feed(scan)
            reader.finishInput()
            var describer = PacketDescriber()
            var total = 0
            while let record = try? reader.next() { total &+= describer.describe(record).utf8.count }
            blackHole(total)
        }
    }

    // `decode --json` against `decode -v` (the field-per-line tree): the same records described, each
    // rendered one way. The goal is JSON within 1.5x of the tree's cost (compare the two wall clocks
    // or instruction counts).
    let large = load("happyleaf_classic_spp_large.btsnoop_hci.log")
    Benchmark("describe happyleaf (JSON lines)") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(describeAll(large, json: true)) }
    }
    Benchmark("describe happyleaf (-v tree)") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(describeAll(large, json: false)) }
    }
}
