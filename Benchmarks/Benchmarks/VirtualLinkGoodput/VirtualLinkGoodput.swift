import Benchmark
import Bluewire
import BluewireCore
import BluewireGATT
import BluewireTesting

/// Two Bluewire stacks on a `VirtualLink` without radio timing, one streaming notifications to the
/// other: the whole host path on both sides (GATT server → ATT bearer → L2CAP fragmentation → ACL
/// credits → virtual controllers → reassembly → ATT → the subscriber's `AsyncSequence`, and Number Of
/// Completed Packets back), in wall-clock time.
///
/// The peripheral streams with `BluetoothHost.streamSequencedNotifications` (what `bluewire serve
/// --throughput` runs) at ATT_MTU 517, so each notification carries 512 octets; the central counts
/// them from `GATTClient.subscribe`. One scaled iteration is one notification: time and allocations
/// are shown per notification, and "goodput" is the payload moved per wall-clock second (Mbit/s;
/// goal: 1,000 Mbit/s = 1 Gbit/s).
final class Stream: @unchecked Sendable {
    // @unchecked: set up once before the iterations, then used by one benchmark task at a time.
    let scene: (clock: TestClock, central: BluetoothHost, peripheral: BluetoothHost)
    let stream: UInt16
    let connection: UInt16
    var notifications: CharacteristicSubscription.AsyncIterator

    init(configuration: VirtualController.Configuration? = nil) async throws {
        let clock = TestClock()
        let link = VirtualLink(clock: clock, timing: .immediate)
        func controller(_ last: UInt8) -> VirtualController {
            var config = configuration ?? VirtualController.Configuration(publicAddress: BluetoothAddress(0x00, 0x1B, 0xDC, 0x60, 0x00, last))
            config.publicAddress = BluetoothAddress(0x00, 0x1B, 0xDC, 0x60, 0x00, last)
            return link.addController(config)
        }
        let central = BluetoothHost(
            transport: VirtualTransport(controller: controller(1)),
            configuration: HostConfiguration(randomAddress: .randomStatic(0x6001)), clock: clock.hostClock)
        let peripheral = BluetoothHost(
            transport: VirtualTransport(controller: controller(2)),
            configuration: HostConfiguration(randomAddress: .randomStatic(0x6002)), clock: clock.hostClock)
        try await central.start()
        try await peripheral.start()
        let peer = try ThroughputPeer()
        await peripheral.setDatabase(peer.database)
        try await peripheral.startAdvertising(try Advertisement(name: "Goodput", services: [ThroughputProfile.service]))
        let link1 = try await central.connect(to: .randomStatic(0x6002))
        let gatt = await link1.gatt
        try await gatt.exchangeMTU()
        guard let served = await peripheral.connections.first else { throw BenchmarkSetupError.noConnection }
        // Both directions at 251-octet link-layer packets, as a throughput peer asks for.
        try await served.requestDataLength()
        let characteristics = try await gatt.discoverAll().flatMap(\.characteristics).map(\.characteristic)
        guard let streamCharacteristic = characteristics.first(where: { $0.uuid == ThroughputProfile.stream }) else {
            throw BenchmarkSetupError.noStream
        }
        notifications = try await gatt.subscribe(to: streamCharacteristic).makeAsyncIterator()
        scene = (clock, central, peripheral)
        stream = peer.handles.stream
        connection = served.handle
    }

    /// Streams `count` notifications and returns the octets the central received.
    func move(_ count: Int) async throws -> Int {
        let peripheral = scene.peripheral, stream = self.stream, connection = self.connection
        async let sent = peripheral.streamSequencedNotifications(stream, to: connection, limit: count)
        var received = 0, octets = 0
        while received < count, let notification = try await notifications.next() {
            received += 1
            octets += notification.value.count
        }
        _ = await sent
        return octets
    }
}

enum BenchmarkSetupError: Error { case noConnection, noStream }

let goodput = BenchmarkMetric.custom("goodput (Mbit/s)", polarity: .prefersLarger, useScalingFactor: false)

nonisolated(unsafe) var stages: [String: Stream] = [:]

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .instructions, .peakMemoryResident, goodput],
        scalingFactor: .kilo, maxDuration: .seconds(5), maxIterations: 100)

    var wholePDUs = VirtualController.Configuration(publicAddress: BluetoothAddress(0x00, 0x1B, 0xDC, 0x60, 0x00, 0x00))
    wholePDUs.aclDelivery = .wholeL2CAPPDUs
    wholePDUs.leBufferSize = VirtualController.BufferSize(packetLength: 1_024, packetCount: 16)
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
            stages[name] = try await Stream(configuration: configuration)
        } teardown: {
            if let stage = stages.removeValue(forKey: name) {
                await stage.scene.central.close()
                await stage.scene.peripheral.close()
            }
        }
    }
}
