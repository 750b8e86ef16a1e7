import Benchmark
import Bluewire
import BluewireCore
import BluewireTesting
import VirtualLinkScene

/// Two Bluewire stacks on a `VirtualLink` streaming 512-octet notifications (`NotificationStream`).
/// One scaled iteration is one notification: time and allocations are shown per notification, and
/// "goodput" is the payload moved per wall-clock second (Mbit/s; goal: 1,000 Mbit/s = 1 Gbit/s).
let goodput = BenchmarkMetric.custom("goodput (Mbit/s)", polarity: .prefersLarger, useScalingFactor: false)

nonisolated(unsafe) var stages: [String: NotificationStream] = [:]

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
            let count = benchmark.scaledIterations.count
            let start = ContinuousClock.now
            benchmark.startMeasurement()
            let octets = try await stage.move(count)
            benchmark.stopMeasurement()
            let (seconds, attoseconds) = (ContinuousClock.now - start).components
            let nanoseconds = Double(seconds) * 1e9 + Double(attoseconds) / 1e9
            benchmark.measurement(goodput, Int(Double(octets) * 8 / nanoseconds * 1_000))
            blackHole(octets)
        } setup: {
            stages[name] = try await NotificationStream(configuration: configuration)
        } teardown: {
            if let stage = stages.removeValue(forKey: name) {
                await stage.scene.central.close()
                await stage.scene.peripheral.close()
            }
        }
    }
}
