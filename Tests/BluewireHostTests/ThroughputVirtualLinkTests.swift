import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireTesting
import PeerTestSupport
import Testing

/// `ThroughputClient` against `ThroughputPeer`, two Bluewire hosts on a virtual link: every mode
/// moves its packets without loss, and with radio timing the goodput stays within the physical limits
/// of the link (Docs/Testing.md, "Physical limits"). Virtual time is deterministic, so the limit is a model
/// check, not a timing assertion.
@Suite("Throughput on the virtual link")
struct ThroughputVirtualLinkTests {
    /// One-way GATT goodput ceilings with 251-octet link-layer packets and ATT_MTU 247 (Docs/Testing.md).
    static let ceilingLE1M = 790.9
    static let ceilingLE2M = 1_402.3

    /// Connects host 0 (central) to host 1 serving the throughput peer and runs `options`.
    static func measure(
        _ options: ThroughputOptions, radio: Bool, mtus: [UInt16] = [247, 247],
        progress: @escaping @Sendable (ThroughputProgress) -> Void = { _ in }
    ) async throws -> (report: ThroughputReport, scene: VirtualLinkScene.Snapshot, peer: ThroughputSinkReport, events: [ThroughputPeer.Event]) {
        try await withScene(hosts: 2, radio: radio, mtus: mtus) { scene in
            let central = scene.hosts[0], peripheral = scene.hosts[1]
            let peer = try ThroughputPeer()
            await peripheral.setDatabase(peer.database)
            let peerEvents = SendableRecorder<ThroughputPeer.Event>()
            let serving = Task { await peer.serve(on: peripheral, events: await peripheral.peripheralEvents()) { peerEvents.append($0) } }
            defer { serving.cancel() }
            try await peripheral.startAdvertising(try Advertisement(name: "Throughput", services: [ThroughputProfile.service]))
            let connection = try await central.connect(to: scene.addresses[1])
            let report = try await ThroughputClient(connection: connection).run(options, progress: progress)
            let snapshot = scene.snapshot()
            let sink = peer.sinkReport(for: try #require(await peripheral.connections.first?.handle))
            try await connection.disconnect()
            return (report, snapshot, sink, peerEvents.values)
        }
    }

    @Test("notify: every notification arrives, in order, each ATT_MTU - 3 octets long", .timeLimit(.minutes(1)))
    func notifyWithoutLoss() async throws {
        let (report, scene, _, events) = try await Self.measure(ThroughputOptions(mode: .notify, packetLimit: 2_000), radio: false)
        #expect(report.mode == .notify && report.mtu == 247)
        #expect(report.packets == 2_000)
        #expect(report.payloadLength == 244)
        #expect(report.octets == report.packets * 244)
        #expect(report.lost == 0 && report.outOfOrder == 0)
        #expect(report.latency == nil, "notifications are not acknowledged")
        #expect(scene.violations.isEmpty, "the stream respects the controller's ACL buffers: \(scene.violations)")
        #expect(events.contains { if case .streamStarted = $0 { true } else { false } })
    }

    @Test("write without response: the sink counts every write, in order", .timeLimit(.minutes(1)))
    func writeWithoutResponseWithoutLoss() async throws {
        let (report, scene, sink, _) = try await Self.measure(
            ThroughputOptions(mode: .writeWithoutResponse, payloadLength: 100, packetLimit: 2_000), radio: false)
        #expect(report.sent == 2_000)
        #expect(report.packets == 2_000 && report.octets == 200_000)
        #expect(report.lost == 0 && report.outOfOrder == 0)
        #expect(sink == ThroughputSinkReport(packets: 2_000, octets: 200_000, lost: 0, outOfOrder: 0))
        #expect(scene.violations.isEmpty, "\(scene.violations)")
    }

    @Test("write: every Write Request is answered, and each round trip is timed", .timeLimit(.minutes(1)))
    func writeWithLatency() async throws {
        let (report, _, sink, _) = try await Self.measure(ThroughputOptions(mode: .write, packetLimit: 200), radio: false)
        #expect(report.sent == 200 && report.packets == 200)
        #expect(report.lost == 0 && report.outOfOrder == 0)
        #expect(sink.packets == 200 && sink.octets == 200 * 244)
        let latency = try #require(report.latency)
        #expect(latency.samples == 200)
        #expect(latency.maximum == .zero, "immediate timing: a round trip takes no virtual time")
    }

    @Test("a handle that is not a characteristic of the peer, or lacks the mode's property, is refused", .timeLimit(.minutes(1)))
    func wrongHandleRefused() async throws {
        await #expect(throws: ThroughputError.self) {
            _ = try await Self.measure(ThroughputOptions(mode: .notify, valueHandle: 0x0123, packetLimit: 1), radio: false)
        }
        let peer = try ThroughputPeer()
        do {
            _ = try await Self.measure(ThroughputOptions(mode: .notify, valueHandle: peer.handles.sink, packetLimit: 1), radio: false)
            Issue.record("notify on the sink (no Notify property) was not refused")
        } catch let error as ThroughputError {
            guard case .propertyMissing(let handle, let needed, _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(handle == peer.handles.sink && needed == .notify)
        }
    }

    @Test("radio timing: notify goodput stays within the physical limit of the link's PHY (LE 1M, or LE 2M when asked for)",
          .timeLimit(.minutes(2)), arguments: [false, true])
    func notifyGoodputWithinPhysicalLimits(askFor2M: Bool) async throws {
        let progress = SendableRecorder<ThroughputProgress>()
        let (report, scene, _, _) = try await Self.measure(
            ThroughputOptions(mode: .notify, duration: .milliseconds(600), progressInterval: .milliseconds(200), phy: askFor2M ? .le2M : nil),
            radio: true
        ) { progress.append($0) }
        let link = try #require(scene.connections.first)
        #expect(link.peripheralToCentralPHY == (askFor2M ? 2 : 1))
        // The report names the PHY the link used whether or not a change was asked for.
        #expect(report.phy == (askFor2M ? ThroughputReport.PHYs(tx: 2, rx: 2) : ThroughputReport.PHYs(tx: 1, rx: 1)))
        #expect(link.peripheralToCentralOctets == 251, "data length raised to 251 octets")
        let ceiling = link.peripheralToCentralPHY == 2 ? Self.ceilingLE2M : Self.ceilingLE1M
        #expect(report.kilobitsPerSecond > 0)
        #expect(report.kilobitsPerSecond <= ceiling, "\(report.kilobitsPerSecond) kbit/s on PHY \(link.peripheralToCentralPHY)")
        print("virtual link, radio timing, notify: \(report.kilobitsPerSecond) kbit/s, PHY \(link.peripheralToCentralPHY), \(report.packets) packets in \(report.elapsed)")
        #expect(report.lost == 0 && report.outOfOrder == 0)
        #expect(report.elapsed <= .milliseconds(600), "measured in virtual time")
        #expect(progress.values.count == 2, "progress at 200 and 400 ms: \(progress.values)")
        #expect(progress.values.allSatisfy { $0.intervalKilobitsPerSecond <= ceiling })
        #expect(scene.violations.isEmpty, "\(scene.violations)")
    }

    @Test("radio timing: write-without-response goodput stays within the physical limit of the link's PHY", .timeLimit(.minutes(2)))
    func writeWithoutResponseGoodputWithinPhysicalLimits() async throws {
        let (report, scene, sink, _) = try await Self.measure(
            ThroughputOptions(mode: .writeWithoutResponse, duration: .milliseconds(600)), radio: true)
        let link = try #require(scene.connections.first)
        #expect(link.centralToPeripheralOctets == 251, "data length raised to 251 octets")
        let ceiling = link.centralToPeripheralPHY == 2 ? Self.ceilingLE2M : Self.ceilingLE1M
        #expect(report.kilobitsPerSecond > 0)
        #expect(report.kilobitsPerSecond <= ceiling, "\(report.kilobitsPerSecond) kbit/s on PHY \(link.centralToPeripheralPHY)")
        print("virtual link, radio timing, write-without-response: \(report.kilobitsPerSecond) kbit/s, PHY \(link.centralToPeripheralPHY), \(report.packets) packets in \(report.elapsed)")
        #expect(report.lost == 0 && report.outOfOrder == 0)
        #expect(sink.packets == report.sent, "the sink counted every write sent")
    }
}

extension VirtualLinkScene {
    /// What a test checks after the run, taken before the scene closes.
    struct Snapshot: Sendable {
        var connections: [VirtualLink.ConnectionInfo]
        var violations: [VirtualController.HostViolation]
    }

    func snapshot() -> Snapshot { Snapshot(connections: link.connections, violations: violations) }
}
