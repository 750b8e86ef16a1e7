import Benchmark
import Bluewire
import BluewireCore
import BluewireTesting
import VirtualLinkScene

/// Two Bluewire stacks on a `VirtualLink` streaming 512-octet notifications (`NotificationStream`), or
/// 512-octet Write Commands (`WriteCommandStream`). One scaled iteration is one packet: time and
/// allocations are shown per packet, and "goodput" is the payload moved per wall-clock second (Mbit/s;
/// goal: 1,000 Mbit/s = 1 Gbit/s).
let goodput = BenchmarkMetric.custom("goodput (Mbit/s)", polarity: .prefersLarger, useScalingFactor: false)

nonisolated(unsafe) var stages: [String: NotificationStream] = [:]
nonisolated(unsafe) var writeStage: WriteCommandStream?

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .instructions, .peakMemoryResident, goodput],
        scalingFactor: .kilo, maxDuration: .seconds(5), maxIterations: 100)

    let wholePDUs = NotificationStream.wholePDUConfiguration
    let variants: [(String, VirtualController.Configuration?)] = [
        ("notifications 512 B, controller defaults (251 B x 8 ACL buffers, one HCI packet per LL PDU)", nil),
        ("notifications 512 B, 1024 B x 16 ACL buffers, whole L2CAP PDUs to the host", wholePDUs),
    ]
    for (name, configuration) in variants {
        Benchmark(name) { benchmark in
            guard let stage = stages[name] else { return }
            try await measureGoodput(benchmark, stage.move)
        } setup: {
            stages[name] = try await NotificationStream(configuration: configuration)
        } teardown: {
            if let stage = stages.removeValue(forKey: name) {
                await stage.scene.central.close()
                await stage.scene.peripheral.close()
            }
        }
    }

    // One scaled iteration is one Write Command; a run's discovery and sink report are spread over its writes.
    Benchmark("write commands 512 B, ThroughputClient on BluetoothHost (controller defaults: 251 B x 8 ACL buffers)") { benchmark in
        guard let stage = writeStage else { return }
        try await measureGoodput(benchmark, stage.move)
    } setup: {
        writeStage = try await WriteCommandStream()
    } teardown: {
        if let stage = writeStage {
            writeStage = nil
            await stage.scene.central.close()
            await stage.scene.peripheral.close()
        }
    }
}

/// Moves one scaled iteration's worth of packets with `move` (it returns the octets moved) inside the
/// measurement, and records the goodput in Mbit/s of wall-clock time.
func measureGoodput(_ benchmark: Benchmark, _ move: (Int) async throws -> Int) async throws {
    let count = benchmark.scaledIterations.count
    let start = ContinuousClock.now
    benchmark.startMeasurement()
    let octets = try await move(count)
    benchmark.stopMeasurement()
    let (seconds, attoseconds) = (ContinuousClock.now - start).components
    let nanoseconds = Double(seconds) * 1e9 + Double(attoseconds) / 1e9
    benchmark.measurement(goodput, Int(Double(octets) * 8 / nanoseconds * 1_000))
    blackHole(octets)
}
