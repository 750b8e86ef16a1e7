import Benchmark
import Bluewire
import BluewireATT
import BluewireCore
import BluewireHCI
import BluewireHostEngine
import BluewireL2CAP
import BluewireTransport
import Synchronization

/// The receive path of a Handle Value Notification, from the ACL packet the controller hands over to
/// the value in the subscriber's hands. Goal (issue 12): at most 300 ns p50 and 0 allocations per
/// notification through the host actor, in steady state.
///
/// - sans-I/O: `ACLPacket` decode → `L2CAPReassembler` → `ATTBearer` → subscriber callback, the
///   protocol layers alone, without the engine or an actor. One scaled iteration is one
///   notification, so the time per iteration is per notification.
/// - EngineHost actor: packets pushed into a transport → `EngineHost` → `HostEngine` → the handler
///   set with `setNotificationHandler`, on the host's executor.
/// - Host actor: packets pushed into a transport → `BluetoothHost` (on its `EngineHost`) → a
///   synchronous handler (`subscribe(to:onNotification:)`), a `CharacteristicSubscription`
///   (`GATTClient.subscribe`, consumed by the benchmark task), or `Connection.notifications`, an
///   `AsyncStream`.
/// - The actor paths run twice: with the packets handed over one at a time, and in bursts of 64
///   with one hand-off each, as the descriptor transports hand over the packets of one read.
let connectionHandle: UInt16 = 0x0040
let valueHandle: UInt16 = 0x0003

/// One ACL packet (no H4 byte) holding a whole L2CAP PDU with a notification of `length` octets,
/// as controllers deliver them when the PDU fits their buffer (bumble sends up to 251 octets).
func notificationPacket(length: Int) -> [UInt8] {
    let att: [UInt8] = [0x1B, UInt8(valueHandle & 0xFF), UInt8(valueHandle >> 8)] + (0..<length).map { UInt8(truncatingIfNeeded: $0) }
    let l2cap: [UInt8] = [UInt8(att.count & 0xFF), UInt8(att.count >> 8), 0x04, 0x00] + att
    // Packet boundary 0b10: first automatically-flushable fragment (controller to host).
    return [UInt8(connectionHandle & 0xFF), UInt8(connectionHandle >> 8) | 0x20, UInt8(l2cap.count & 0xFF), UInt8(l2cap.count >> 8)] + l2cap
}

/// The same notification split into ACL fragments of at most `bufferSize` data octets.
func fragments(of packet: [UInt8], bufferSize: Int) -> [[UInt8]] {
    let l2cap = Array(packet[4...])
    var result: [[UInt8]] = []
    var offset = 0
    while offset < l2cap.count {
        let part = Array(l2cap[offset..<min(offset + bufferSize, l2cap.count)])
        let boundary: UInt8 = offset == 0 ? 0x20 : 0x10
        result.append([UInt8(connectionHandle & 0xFF), UInt8(connectionHandle >> 8) | boundary, UInt8(part.count), 0] + part)
        offset += bufferSize
    }
    return result
}

/// One connection's receive state, as the Host keeps it, and the delivery to one subscriber.
struct ReceivePath {
    var reassembler = L2CAPReassembler()
    var bearer = ATTBearer(preferredMTU: 517, autoConfirmIndications: true)
    var delivered = 0
    var octets = 0

    @inline(__always)
    mutating func receive(_ payload: ArraySlice<UInt8>, now: MonotonicInstant) {
        guard let packet = try? ACLPacket(decoding: payload) else { return }
        guard let pdu = reassembler.receive(packet).pdu, pdu.channelID == .att else { return }
        bearer.receive(pdu.payload, now: now)
        while let output = bearer.nextOutput() {
            if case .event(.notification(let handle, let value)) = output { deliver(handle, value) }
        }
    }

    /// The subscriber: reads the value, as an application would.
    @inline(__always)
    mutating func deliver(_ handle: UInt16, _ value: ArraySlice<UInt8>) {
        delivered &+= 1
        octets &+= value.count &+ Int(handle)
    }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .instructions],
        timeUnits: .nanoseconds, warmupIterations: 10, scalingFactor: .kilo, maxDuration: .seconds(3), maxIterations: 1_000)

    for length in [20, 244] {
        let packet = notificationPacket(length: length)[...]
        Benchmark("sans-I/O ACL → L2CAP → ATT → subscriber, \(length)-byte notification") { benchmark in
            var path = ReceivePath()
            let now = MonotonicInstant(microseconds: 1)
            // Steady state: the bearer's output buffer has its capacity before measuring.
            path.receive(packet, now: now)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { path.receive(packet, now: now) }
            benchmark.stopMeasurement()
            blackHole(path.octets)
            precondition(path.delivered == benchmark.scaledIterations.count + 1)
        }
    }

    // Controllers with 27-octet buffers (no Data Length Extension): a 244-byte notification in 10
    // fragments, reassembled into a buffer of its own (one allocation per PDU is expected here).
    let fragmented = fragments(of: notificationPacket(length: 244), bufferSize: 27).map { $0[...] }
    Benchmark("sans-I/O 244-byte notification in 27-octet ACL fragments (reassembled)") { benchmark in
        var path = ReceivePath()
        let now = MonotonicInstant(microseconds: 1)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            for fragment in fragmented { path.receive(fragment, now: now) }
        }
        benchmark.stopMeasurement()
        blackHole(path.octets)
    }

    // Baselines for the Host numbers: what one hand-off through each queue on the way costs alone,
    // in the same batches of 64 (the transport's inbound queue, and the AsyncStream the subscriber reads).
    let packet = notificationPacket(length: 20)
    Benchmark("baseline: HCIInboundPackets yield → next, batches of 64") { benchmark in
        let (packets, feed) = HCIInboundPackets.makeStream()
        var iterator = packets.makeAsyncIterator()
        var octets = 0
        benchmark.startMeasurement()
        var done = 0
        while done < benchmark.scaledIterations.count {
            let count = min(64, benchmark.scaledIterations.count - done)
            for _ in 0..<count { feed.yield(HCIPacket(type: .acl, payload: packet)) }
            for _ in 0..<count { octets &+= (try? await iterator.next())??.payload.count ?? 0 }
            done += count
        }
        benchmark.stopMeasurement()
        blackHole(octets)
    }
    Benchmark("baseline: AsyncStream<GATTNotification> yield → next, batches of 64") { benchmark in
        let (stream, feed) = AsyncStream<GATTNotification>.makeStream(bufferingPolicy: .unbounded)
        var iterator = stream.makeAsyncIterator()
        let notification = GATTNotification(handle: valueHandle, value: packet[11...], isIndication: false)
        var octets = 0
        benchmark.startMeasurement()
        var done = 0
        while done < benchmark.scaledIterations.count {
            let count = min(64, benchmark.scaledIterations.count - done)
            for _ in 0..<count { feed.yield(notification) }
            for _ in 0..<count { octets &+= await iterator.next()?.value.count ?? 0 }
            done += count
        }
        benchmark.stopMeasurement()
        blackHole(octets)
    }

    for length in [20, 244] {
        let packet = notificationPacket(length: length)
        Benchmark("Host actor: transport → BluetoothHost → CharacteristicSubscription, \(length)-byte notification") { benchmark in
            await runThroughHost(benchmark, packet: packet) { connection in
                let gatt = await connection.gatt
                let characteristic = try await gatt.discoverAll()[0].characteristics[0].characteristic
                var iterator = try await gatt.subscribe(to: characteristic).makeAsyncIterator()
                return { try await iterator.next()?.value.count ?? 0 }
            }
        }
    }
    for length in [20, 244] {
        let packet = notificationPacket(length: length)
        Benchmark("Host actor: transport → BluetoothHost → synchronous handler (subscribe onNotification:), \(length)-byte notification") { benchmark in
            await runThroughHostWithHandler(benchmark, packet: packet)
        }
    }
    for length in [20, 244] {
        let packet = notificationPacket(length: length)
        Benchmark("EngineHost actor: transport → HostEngine → synchronous handler (setNotificationHandler), \(length)-byte notification") { benchmark in
            await runThroughEngineHost(benchmark, packet: packet)
        }
    }
    let burstPacket = notificationPacket(length: 20)
    Benchmark("Host actor: transport burst of 64 → BluetoothHost → CharacteristicSubscription, 20-byte notification") { benchmark in
        await runThroughHost(benchmark, packet: burstPacket, delivery: .burst) { connection in
            let gatt = await connection.gatt
            let characteristic = try await gatt.discoverAll()[0].characteristics[0].characteristic
            var iterator = try await gatt.subscribe(to: characteristic).makeAsyncIterator()
            return { try await iterator.next()?.value.count ?? 0 }
        }
    }
    Benchmark("Host actor: transport burst of 64 → BluetoothHost → synchronous handler (subscribe onNotification:), 20-byte notification") { benchmark in
        await runThroughHostWithHandler(benchmark, packet: burstPacket, delivery: .burst)
    }
    Benchmark("EngineHost actor: transport burst of 64 → HostEngine → synchronous handler (setNotificationHandler), 20-byte notification") { benchmark in
        await runThroughEngineHost(benchmark, packet: burstPacket, delivery: .burst)
    }
    Benchmark("Host actor: transport → BluetoothHost → Connection.notifications (AsyncStream), 20-byte notification") { benchmark in
        await runThroughHost(benchmark, packet: notificationPacket(length: 20)) { connection in
            var iterator = await connection.notifications(valueHandle: valueHandle).makeAsyncIterator()
            return { await iterator.next()?.value.count ?? 0 }
        }
    }
    registerWritePathBenchmarks()
}

/// Connects a Host to a `BenchController`, lets `subscribe` set up a subscriber (returning how to
/// take the next value), then measures `packet` pushed in batches of 64 and taken by the subscriber.
func runThroughHost(
    _ benchmark: Benchmark, packet: [UInt8], delivery: Delivery = .perPacket,
    subscribe: (Connection) async throws -> () async throws -> Int
) async {
    let controller = BenchController()
    let host = BluetoothHost(transport: controller)
    do {
        try await host.start()
        let connection = try await host.connect(to: BenchController.peer)
        let next = try await subscribe(connection)
        let batch = 64
        let burst = [HCIPacket](repeating: HCIPacket(type: .acl, payload: packet), count: batch)
        var octets = 0
        // Warm up the Host's and the subscriber's buffers.
        delivery.deliver(burst[...], to: controller)
        for _ in 0..<batch { octets &+= try await next() }
        let total = benchmark.scaledIterations.count
        benchmark.startMeasurement()
        var sent = 0
        while sent < total {
            let count = min(batch, total - sent)
            delivery.deliver(burst.prefix(count), to: controller)
            for _ in 0..<count { octets &+= try await next() }
            sent += count
        }
        benchmark.stopMeasurement()
        blackHole(octets)
    } catch {
        benchmark.error("\(error)")
    }
    await host.close()
}

/// Like `runThroughHost`, with the subscriber a synchronous handler (`subscribe(to:onNotification:)`)
/// that counts on the host's executor; the measuring task waits once per batch of 64 until the
/// handler has seen them all.
func runThroughHostWithHandler(_ benchmark: Benchmark, packet: [UInt8], delivery: Delivery = .perPacket) async {
    let controller = BenchController()
    let host = BluetoothHost(transport: controller)
    let arrivals = HandlerArrivals()
    do {
        try await host.start()
        let connection = try await host.connect(to: BenchController.peer)
        let gatt = await connection.gatt
        let characteristic = try await gatt.discoverAll()[0].characteristics[0].characteristic
        let subscription = try await gatt.subscribe(to: characteristic) { notification in
            arrivals.arrived(octets: notification.value.count)
        }
        await measureBatches(benchmark, controller: controller, packet: packet, arrivals: arrivals, delivery: delivery)
        withExtendedLifetime(subscription) {}
    } catch {
        benchmark.error("\(error)")
    }
    await host.close()
}

/// Like `runThroughHostWithHandler`, on `EngineHost` (the sans-I/O engine in its async shell): the
/// engine discovers and subscribes, and the handler set with `setNotificationHandler` counts on the
/// host's executor as each packet is decoded.
func runThroughEngineHost(_ benchmark: Benchmark, packet: [UInt8], delivery: Delivery = .perPacket) async {
    let controller = BenchController()
    let host = EngineHost(transport: controller, configuration: HostEngineConfiguration(
        randomAddress: BluetoothAddress(0xC4, 0x5A, 0x17, 0x00, 0xB1, 0x0E, type: .random)))
    let arrivals = HandlerArrivals()
    do {
        _ = try await host.perform(.start).get()
        guard case .connected(let link) = try await host.perform(.connect(BenchController.peer, LEConnectionParameters())).get(),
              case .services(let services) = try await host.perform(.gatt(connection: link.handle, .discoverAll)).get(),
              let characteristic = services.first?.characteristics.first else {
            benchmark.error("no connection or characteristic")
            return
        }
        _ = try await host.perform(.gatt(connection: link.handle, .subscribe(
            characteristic.characteristic, indications: false, descriptorHandle: characteristic.clientConfigurationHandle))).get()
        await host.setNotificationHandler { _, notification in arrivals.arrived(octets: notification.value.count) }
        await measureBatches(benchmark, controller: controller, packet: packet, arrivals: arrivals, delivery: delivery)
    } catch {
        benchmark.error("\(error)")
    }
    await host.close()
}

/// Pushes `packet` in batches of 64 (one warm-up batch first) and waits once per batch until the
/// handler has seen them all; only the measured batches count.
func measureBatches(
    _ benchmark: Benchmark, controller: BenchController, packet: [UInt8], arrivals: HandlerArrivals, delivery: Delivery
) async {
    let batch = 64
    let burst = [HCIPacket](repeating: HCIPacket(type: .acl, payload: packet), count: batch)
    var expected = 0
    delivery.deliver(burst[...], to: controller)
    expected += batch
    await arrivals.wait(until: expected)
    let total = benchmark.scaledIterations.count
    benchmark.startMeasurement()
    var sent = 0
    while sent < total {
        let count = min(batch, total - sent)
        delivery.deliver(burst.prefix(count), to: controller)
        expected += count
        await arrivals.wait(until: expected)
        sent += count
    }
    benchmark.stopMeasurement()
    blackHole(arrivals.octets)
}

/// Counts what the synchronous handler received (on the host's executor) and wakes the measuring
/// task once a batch is complete.
final class HandlerArrivals: Sendable {
    private struct State {
        var count = 0
        var octets = 0
        var target = Int.max
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    var octets: Int { state.withLock { $0.octets } }

    func arrived(octets: Int) {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
            state.count += 1
            state.octets &+= octets
            guard state.count >= state.target, let waiter = state.waiter else { return nil }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    func wait(until count: Int) async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state in
                if state.count >= count { return true }
                state.target = count
                state.waiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }
}

/// How the benchmark's transport hands packets to the host: one at a time (one hand-off each, as a
/// transport whose every read held one packet), or 64 at once (one hand-off for the burst, as the
/// descriptor transports yield the packets of one read or one poll wake-up).
enum Delivery {
    case perPacket
    case burst

    func deliver(_ packets: ArraySlice<HCIPacket>, to controller: BenchController) {
        switch self {
        case .perPacket: for packet in packets { controller.deliver(packet: packet) }
        case .burst: controller.deliver(burst: packets)
        }
    }
}
