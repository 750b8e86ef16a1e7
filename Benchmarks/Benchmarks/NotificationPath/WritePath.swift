import Benchmark
import Bluewire
import BluewireCore
import BluewireHostEngine

/// The Write Request path, one in flight, as `bluewire throughput --mode write` drives it: the
/// application's write → the link's GATT operation queue → ATT bearer → ACL → the controller, whose
/// GATT server answers with a Write Response → completion → the application, which then writes the
/// next value (its first four octets a new sequence number, as `ThroughputProfile` writes them). One
/// scaled iteration is one Write Request, so the time and allocations per iteration are per write;
/// they include `BenchController`'s side (its GATT server and the packets it builds), the same for
/// every case.
func registerWritePathBenchmarks() {
    for length in [20, 244] {
        Benchmark("EngineHost actor: EngineConnection.perform(.write), one in flight, \(length)-byte value") { benchmark in
            await writeThroughEngineHost(benchmark, length: length)
        }
        Benchmark("Host actor: GATTClient.write(_:to:), one in flight, \(length)-byte value") { benchmark in
            await writeThroughHost(benchmark, length: length)
        }
    }
}

/// Write Requests through `EngineHost`, as `EngineThroughputClient` issues them.
func writeThroughEngineHost(_ benchmark: Benchmark, length: Int) async {
    let controller = BenchController()
    let host = EngineHost(transport: controller, configuration: HostEngineConfiguration(
        randomAddress: BluetoothAddress(0xC4, 0x5A, 0x17, 0x00, 0xB1, 0x0E, type: .random)))
    do {
        _ = try await host.perform(.start).get()
        let connection = try await host.connect(to: BenchController.peer)
        _ = try await connection.perform(.exchangeMTU)
        // Discovered first, as the throughput client does: the peer's state machine refuses a write before.
        _ = try await connection.perform(.discoverAll)
        var value = ThroughputProfile.packet(sequence: 0, length: length)
        var sequence: UInt32 = 0
        // Warm up the host's buffers and the waiters' storage.
        for _ in 0..<64 {
            ThroughputProfile.writeSequence(sequence, into: &value)
            _ = try await connection.perform(.write(handle: BenchController.writableHandle, value: value))
            sequence &+= 1
        }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            ThroughputProfile.writeSequence(sequence, into: &value)
            _ = try await connection.perform(.write(handle: BenchController.writableHandle, value: value))
            sequence &+= 1
        }
        benchmark.stopMeasurement()
        blackHole(sequence)
    } catch {
        benchmark.error("\(error)")
    }
    await host.close()
}

/// Write Requests through `BluetoothHost` and its `GATTClient`, as `ThroughputClient` issues them:
/// the old path, for comparison.
func writeThroughHost(_ benchmark: Benchmark, length: Int) async {
    let controller = BenchController()
    let host = BluetoothHost(transport: controller)
    do {
        try await host.start()
        let connection = try await host.connect(to: BenchController.peer)
        _ = try await connection.exchangeMTU()
        let gatt = await connection.gatt
        _ = try await gatt.discoverAll()
        var value = ThroughputProfile.packet(sequence: 0, length: length)
        var sequence: UInt32 = 0
        for _ in 0..<64 {
            ThroughputProfile.writeSequence(sequence, into: &value)
            try await gatt.write(value, to: BenchController.writableHandle)
            sequence &+= 1
        }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            ThroughputProfile.writeSequence(sequence, into: &value)
            try await gatt.write(value, to: BenchController.writableHandle)
            sequence &+= 1
        }
        benchmark.stopMeasurement()
        blackHole(sequence)
    } catch {
        benchmark.error("\(error)")
    }
    await host.close()
}
