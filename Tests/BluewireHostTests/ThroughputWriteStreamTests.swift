import Bluewire
import BluewireCore
import BluewireHostEngine
import BluewireTesting
import PeerTestSupport
import Testing

/// `ThroughputClient`'s write-without-response mode on a `BluetoothHost` runs on the host engine's
/// stream of Write Commands (`HostRequest.streamATT`): progress reads how far the engine got, the run
/// ends once the controller has taken every write, and cancelling it stops the stream, leaving the
/// link's ACL queue empty and nothing more on its way to the peer. `EngineThroughputClient` shares
/// that code (`ThroughputWriteLink`), and its cancellation is tested here too.
@Suite("Throughput: Write Commands from the engine's stream", .timeLimit(.minutes(1)))
struct ThroughputWriteStreamTests {
    /// Host 0 (central) connected to host 1 serving the throughput peer, with radio timing.
    static func withThroughputLink<T>(
        _ body: (Connection, ThroughputPeer, BluetoothHost) async throws -> T
    ) async throws -> T {
        try await withScene(hosts: 2, radio: true, mtus: [247, 247]) { scene in
            let central = scene.hosts[0], peripheral = scene.hosts[1]
            let peer = try ThroughputPeer()
            await peripheral.setDatabase(peer.database)
            try await peripheral.startAdvertising(try Advertisement(name: "Throughput", services: [ThroughputProfile.service]))
            let connection = try await central.connect(to: scene.addresses[1])
            return try await body(connection, peer, peripheral)
        }
    }

    @Test("progress follows the engine's stream, and the run ends with the link's ACL queue empty")
    func progressAndEnd() async throws {
        try await Self.withThroughputLink { connection, peer, peripheral in
            let progress = SendableRecorder<ThroughputProgress>()
            let options = ThroughputOptions(mode: .writeWithoutResponse, duration: .milliseconds(600), progressInterval: .milliseconds(200))
            let report = try await ThroughputClient(connection: connection).run(options) { progress.append($0) }
            #expect(try await connection.host.queuedACLPackets(of: connection) == 0, "the stream ends once the controller took every write")
            let packets = progress.values.map(\.packets)
            #expect(packets.count == 2, "progress at 200 and 400 ms: \(progress.values)")
            #expect(packets.first.map { $0 > 0 } == true && packets == packets.sorted() && Set(packets).count == packets.count,
                    "each progress line counts what the engine has sent by then: \(packets)")
            #expect(packets.last.map { report.sent! > $0 } == true, "the run went on after the last progress line")
            let served = try #require(await peripheral.connections.first)
            #expect(peer.sinkReport(for: served.handle) == ThroughputSinkReport(
                packets: report.sent!, octets: report.sent! * report.payloadLength, lost: 0, outOfOrder: 0))
        }
    }

    @Test("cancelling the run stops the stream: the ACL queue is empty and no write follows")
    func cancellationStopsTheStream() async throws {
        try await Self.withThroughputLink { connection, peer, peripheral in
            let firstProgress = Latch()
            let options = ThroughputOptions(mode: .writeWithoutResponse, duration: .seconds(60), progressInterval: .milliseconds(100))
            let run = Task { try await ThroughputClient(connection: connection).run(options) { _ in firstProgress.signal() } }
            await firstProgress.wait()
            let clock = connection.host.clock
            let cancelledAt = clock.now
            run.cancel()
            // A cancelled run ends without its sink report, or with it if it got there first.
            _ = try? await run.value
            #expect(clock.now - cancelledAt < .seconds(1), "the run ends at the cancellation, not at its 60 s deadline (virtual time)")
            #expect(try await connection.host.queuedACLPackets(of: connection) == 0)
            let served = try #require(await peripheral.connections.first)
            let counted = peer.sinkReport(for: served.handle)
            #expect(counted.packets > 0 && counted.lost == 0 && counted.outOfOrder == 0, "\(counted)")
            // Writes the central's controller still held, or the peripheral's host had not yet read,
            // arrive before the Read Request, so its answer counts everything the stream sent. (No
            // bound on how many: the peripheral's host may lag its controller by any number under load.)
            let gatt = await connection.gatt
            _ = try await gatt.read(handle: peer.handles.sinkReport)
            let delivered = peer.sinkReport(for: served.handle).packets
            _ = try await gatt.read(handle: peer.handles.sinkReport)
            #expect(peer.sinkReport(for: served.handle).packets == delivered, "no Write Command after the run ended")
            #expect(try await connection.host.queuedACLPackets(of: connection) == 0)
        }
    }

    @Test("EngineThroughputClient: cancelling the run stops the engine's stream at once")
    func engineCancellationStopsTheStream() async throws {
        let clock = TestClock()
        let link = VirtualLink(clock: clock, timing: .radio())
        let central = EngineHost(
            transport: VirtualTransport(controller: link.addController(publicAddress: VirtualAddress.centralPublic)),
            configuration: HostEngineConfiguration(randomAddress: .randomStatic(0x0A0B_0C0D_0E21)), clock: clock)
        let peripheralAddress = BluetoothAddress.randomStatic(0x0A0B_0C0D_0E22)
        let peripheral = EngineHost(
            transport: VirtualTransport(controller: link.addController(publicAddress: VirtualAddress.peripheralPublic)),
            configuration: HostEngineConfiguration(randomAddress: peripheralAddress, preferredMTU: 247), clock: clock)
        let pump = Task { await clock.runFreely() }
        defer { pump.cancel() }
        let peer = try ThroughputPeer()
        await peripheral.setDatabase(peer.database)
        _ = try await central.perform(.start).get()
        _ = try await peripheral.perform(.start).get()
        _ = try await peripheral.perform(.startAdvertising(.named("Throughput", services: [ThroughputProfile.service]))).get()
        let connection = try await central.connect(to: peripheralAddress)

        let firstProgress = Latch()
        let options = ThroughputOptions(mode: .writeWithoutResponse, duration: .seconds(60), progressInterval: .milliseconds(100))
        let run = Task { try await EngineThroughputClient(connection: connection).run(options) { _ in firstProgress.signal() } }
        await firstProgress.wait()
        let cancelledAt = clock.now
        run.cancel()
        _ = try? await run.value
        #expect(clock.now - cancelledAt < .seconds(1), "the run ends at the cancellation, not at its 60 s deadline (virtual time)")
        #expect(await central.attStreamSent(connection: connection.handle, pdu: .writeCommand) == nil, "no stream runs")

        // The sink report's Read Request leaves after every Write Command: its answer counts them all.
        func delivered() async throws -> Int {
            guard case .value(let value) = try await connection.perform(.read(handle: peer.handles.sinkReport)),
                  let report = ThroughputSinkReport(decoding: value) else { throw ThroughputError.characteristicNotFound(handle: nil, mode: .writeWithoutResponse) }
            #expect(report.lost == 0 && report.outOfOrder == 0, "\(report)")
            return report.packets
        }
        let first = try await delivered()
        #expect(first > 0)
        #expect(try await delivered() == first, "no Write Command after the run ended")
        _ = try await connection.disconnect()
        await central.close()
        await peripheral.close()
    }
}
