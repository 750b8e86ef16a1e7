import Benchmark
import BluewireCore

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .mallocCountTotal, .instructions], maxDuration: .seconds(2))
    let bytes: [UInt8] = Array(repeating: 0x42, count: 4096)
    Benchmark("ByteReader UInt32 walk") { benchmark in
        for _ in benchmark.scaledIterations {
            var reader = ByteReader(bytes)
            var sum: UInt32 = 0
            while reader.remainingCount >= 4 { sum &+= (try? reader.readUInt32("w")) ?? 0 }
            blackHole(sum)
        }
    }
}
