@_spi(Testing) import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import BluewireTesting
import Synchronization
import Testing

/// A `BluetoothHost` and an `EngineHost` peer, each on its own virtual controller
/// of one `VirtualLink`, on the link's clock. With radio timing a pump moves virtual time, so ACL
/// packets leave only at connection events and the host's ACL queue really fills.
final class HostLinkBench: Sendable {
    static let hostAddress = BluetoothAddress.randomStatic(0x5CE1_0001)
    static let peerAddress = BluetoothAddress.randomStatic(0x5CE1_0002)

    let clock: TestClock
    /// The host's controller, then the peer's.
    let controllers: [VirtualController]
    let host: BluetoothHost
    let peer: EngineHost
    private let pump = Mutex<Task<Void, Never>?>(nil)

    init(radio: Bool) async throws {
        let clock = TestClock()
        let link = VirtualLink(clock: clock, timing: radio ? .radio() : .immediate)
        let controllers = (1...2).map { link.addController(publicAddress: BluetoothAddress(0x00, 0x1B, 0xDC, 0x5D, 0x00, UInt8($0))) }
        self.clock = clock
        self.controllers = controllers
        host = BluetoothHost(
            transport: VirtualTransport(controller: controllers[0]), configuration: HostConfiguration(randomAddress: Self.hostAddress),
            clock: clock)
        peer = EngineHost(
            transport: VirtualTransport(controller: controllers[1]),
            configuration: HostEngineConfiguration(randomAddress: Self.peerAddress, preferredMTU: 247), clock: clock)
        if radio { runClock() }
        try await host.start()
        _ = try await peer.perform(.start).get()
    }

    /// Virtual time runs freely (radio timing): connection events happen, ACL buffers come back.
    func runClock() {
        let clock = self.clock
        pump.withLock { $0 = Task { await clock.runFreely() } }
    }

    /// Virtual time stops: nothing more crosses the air until `runClock()`.
    func stopClock() {
        pump.withLock { $0.take() }?.cancel()
    }

    func close() async {
        await host.close()
        await peer.close()
        stopClock()
    }
}

/// Link parameters, the ACL queue, the notification stream and `release` through `BluetoothHost`
/// (Docs/Design.md, "BluetoothHost over the engine").
@Suite("BluetoothHost: link parameters, ACL queue, release", .timeLimit(.minutes(1)))
struct HostLinkTests {
    /// The status of a `HostError.command(.failed)` thrown by `body`, with its opcode.
    static func commandFailure(_ body: () async throws -> Void) async -> (HCIOpcode, HCIStatus)? {
        do {
            try await body()
        } catch HostError.command(.failed(let opcode, let status)) {
            return (opcode, status)
        } catch {
            Issue.record("unexpected error \(error)")
        }
        return nil
    }

    @Test("PHY, connection and data length requests: their events arrive, and refusals are the controller's answers",
          .timeLimit(.minutes(1)))
    func linkParameters() async throws {
        let bench = try await HostLinkBench(radio: false)
        _ = try await bench.peer.perform(.startAdvertising(.named("Peer"))).get()
        let events = Transcript(await bench.host.events())
        let connection = try await bench.host.connect(to: HostLinkBench.peerAddress)
        let handle = connection.handle

        let read = try await bench.host.send(.leReadPHY(ConnectionHandleParameter(connectionHandle: handle)))
        let before = try read.returnParameters(LEReadPHYReturn.self, opcode: .leReadPHY)
        let other: UInt8 = before.txPHY == 2 ? 1 : 2
        try await connection.requestPHY(tx: other == 2 ? [.le2M] : [.le1M], rx: other == 2 ? [.le2M] : [.le1M])
        await events.wait(for: 1) { if case .phyUpdated(handle, other, other) = $0 { true } else { false } }

        try await connection.updateParameters(LEConnectionParameters(connectionIntervalMin: 0x0030, connectionIntervalMax: 0x0030))
        await events.wait(for: 1) { if case .connectionUpdated(handle, 0x0030, _, _) = $0 { true } else { false } }

        try await connection.requestDataLength()
        let outOfRange = await Self.commandFailure { try await connection.requestDataLength(txOctets: 10) }
        #expect(outOfRange?.0 == .leSetDataLength && outOfRange?.1 == .invalidHCICommandParameters)

        try await connection.disconnect()
        let phyGone = await Self.commandFailure { try await connection.requestPHY() }
        #expect(phyGone?.0 == .leSetPHY && phyGone?.1 == .unknownConnectionIdentifier)
        let updateGone = await Self.commandFailure { try await connection.updateParameters(LEConnectionParameters()) }
        #expect(updateGone?.0 == .leConnectionUpdate && updateGone?.1 == .unknownConnectionIdentifier)
        let lengthGone = await Self.commandFailure { try await connection.requestDataLength() }
        #expect(lengthGone?.0 == .leSetDataLength && lengthGone?.1 == .unknownConnectionIdentifier)
        await bench.close()
    }

    @Test("LE Set PHY left unanswered fails requestPHY with a timeout after its own timeout; the link's next request still runs",
          .timeLimit(.minutes(1)))
    func requestPHYTimesOut() async throws {
        let bench = try await HostLinkBench(radio: true)
        _ = try await bench.peer.perform(.startAdvertising(.named("Peer"))).get()
        let connection = try await bench.host.connect(to: HostLinkBench.peerAddress)
        bench.controllers[0].faults.silentOpcodes = [HCIOpcode.leSetPHY.rawValue]
        let start = bench.clock.now
        do {
            try await connection.requestPHY(timeout: .milliseconds(50))
            Issue.record("LE Set PHY was answered")
        } catch HostError.command(.timeout(let opcode)) {
            #expect(opcode == .leSetPHY)
        }
        // Virtual time: the call's 50 ms, not the configuration's 2 s command timeout.
        #expect(bench.clock.now - start < .seconds(1), "\(bench.clock.now - start)")
        let events = Transcript(await bench.host.events())
        try await connection.updateParameters(LEConnectionParameters(connectionIntervalMin: 0x0030, connectionIntervalMax: 0x0030))
        await events.wait(for: 1) { if case .connectionUpdated(connection.handle, 0x0030, _, _) = $0 { true } else { false } }
        await bench.close()
    }

    /// The host serves `ThroughputPeer`'s database and advertises; the engine peer connects as
    /// central, discovers and subscribes to the stream. Virtual time runs (radio timing).
    static func subscribed() async throws -> (
        bench: HostLinkBench, server: ThroughputPeer, central: EngineConnection, handle: UInt16, received: AsyncStream<ArraySlice<UInt8>>
    ) {
        let bench = try await HostLinkBench(radio: true)
        let server = try ThroughputPeer()
        await bench.host.setDatabase(server.database)
        try await bench.host.startAdvertising(try Advertisement(name: "Throughput"))
        guard case .connected(let link) = try await bench.peer.perform(.connect(HostLinkBench.hostAddress, LEConnectionParameters())).get(),
              case .services(let services) = try await EngineConnection(host: bench.peer, link: link).perform(.discoverAll) else {
            throw ScenarioFailure("no connection or no discovery")
        }
        let central = EngineConnection(host: bench.peer, link: link)
        let stream = try #require(services.flatMap(\.characteristics).first { $0.characteristic.uuid == ThroughputProfile.stream })
        let received = await central.notifications(for: stream.characteristic.valueHandle)
        _ = try await central.perform(.subscribe(stream.characteristic, indications: false, descriptorHandle: nil))
        let handle = try #require(await bench.host.connections.first?.handle)
        return (bench, server, central, handle, received)
    }

    /// The sequence numbers of the first `count` values of `received`.
    static func sequences(_ received: AsyncStream<ArraySlice<UInt8>>, count: Int) async -> [UInt32] {
        var sequences: [UInt32] = []
        for await value in received {
            let start = value.startIndex
            sequences.append(UInt32(value[start]) | UInt32(value[start + 1]) << 8 | UInt32(value[start + 2]) << 16 | UInt32(value[start + 3]) << 24)
            if sequences.count == count { break }
        }
        return sequences
    }

    @Test("a notification stream keeps the ACL queue filled; waitForACLQueue waits until it drains, then says the link is gone",
          .timeLimit(.minutes(1)))
    func notificationStreamAndACLQueue() async throws {
        let (bench, server, central, handle, received) = try await Self.subscribed()
        let buffers = await bench.host.aclBufferCount
        #expect(buffers > 0)
        let count = 40 * buffers
        // With virtual time stopped no buffer comes back: the stream fills the host's queue and stops there.
        bench.stopClock()
        let sender = Task { await bench.host.streamSequencedNotifications(server.handles.stream, to: handle, limit: count) }
        try await bench.host.until("the stream fills the ACL queue") { $0.aclPacketsQueued > 0 }
        let drained = Task { await bench.host.waitForACLQueue(of: handle, atMost: 0) }
        try await bench.host.until("the sender waits for the queue") { $0.aclQueueWaiters == 1 }
        bench.runClock()
        #expect(await drained.value, "the queue drains as the controller returns buffers")
        #expect(await sender.value == count)
        #expect(await bench.host.waitForACLQueue(of: handle, atMost: 0))
        #expect(await bench.host.queuedACLPackets(of: handle) == 0)
        #expect(await Self.sequences(received, count: count) == (0..<UInt32(count)).map { $0 }, "every notification arrived, in order")

        _ = try await central.disconnect()
        try await bench.host.until("the link is gone") { $0.links == 0 }
        #expect(await !bench.host.waitForACLQueue(of: handle, atMost: 0), "no link: false at once")
        await bench.close()
    }

    @Test("cancelling the task of an endless notification stream ends it; what it sent arrives in order",
          .timeLimit(.minutes(1)))
    func notificationStreamEndsWhenCancelled() async throws {
        let (bench, server, _, handle, received) = try await Self.subscribed()
        bench.stopClock()
        let sender = Task { await bench.host.streamSequencedNotifications(server.handles.stream, to: handle, firstSequence: 7) }
        try await bench.host.until("the stream fills the ACL queue") { $0.aclPacketsQueued > 0 }
        sender.cancel()
        bench.runClock()
        let sent = await sender.value
        #expect(sent > 0)
        #expect(await bench.host.waitForACLQueue(of: handle, atMost: 0), "the stream stopped filling the queue")
        #expect(await Self.sequences(received, count: sent) == (7..<UInt32(7 + sent)).map { $0 })
        await bench.close()
    }

    @Test("release() stops the scan, disconnects every link (Remote User Terminated Connection) and closes the host",
          .timeLimit(.minutes(1)))
    func releaseDisconnectsAndCloses() async throws {
        let bench = try await HostLinkBench(radio: false)
        _ = try await bench.peer.perform(.startAdvertising(.named("Peer"))).get()
        let peerEvents = Transcript(await bench.peer.events())
        _ = try await bench.host.connect(to: HostLinkBench.peerAddress)
        await bench.host.clearControllerLeftovers()
        let scan = await bench.host.scan()
        let scanning = Task { for try await _ in scan {} }
        await bench.host.release()
        try await scanning.value
        let ended = await peerEvents.wait(for: 1) { if case .disconnected = $0 { true } else { false } }
        if case .disconnected(_, let reason)? = ended.first { #expect(reason == .remoteUserTerminatedConnection) }
        #expect(await bench.host.connections.isEmpty)
        do {
            _ = try await bench.host.send(.readLocalVersionInformation)
            Issue.record("a command after release() was sent")
        } catch {
            if case .notRunning = error {} else { Issue.record("\(error)") }
        }
        await bench.close()
    }
}
