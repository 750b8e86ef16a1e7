import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import BluewireTesting
import HostTestSupport
import Testing

/// Known peers follow the scan (`.watch`, HostEngine+WatchedPeers): the expectations of
/// `ConnectionStateMachineHostTests.scanTransitions` and `.peerKnownDuringAScan` (a real
/// `BluetoothHost`) on two engines on the virtual link, in virtual time.
@Suite("Host engine: known peers follow the scan")
struct EngineWatchedPeerTests {
    static let peer = EnginesOnVirtualLink.peripheralAddress
    /// A peer the central knows (it watches it) but that never advertises.
    static let bystander = BluetoothAddress(value: 0xC4_5A_17_00_FC_03, type: .random)
    static let scanning: [(ConnectionTrigger, ConnectionState)] = [(.startScan, .disconnected(.scanning)), (.deviceFound, .disconnected(.scanning))]

    /// `peer`'s transitions; repeated DeviceFound self-transitions (one per report) count as one.
    static func transitions(_ events: [HostEngineEvent], of peer: BluetoothAddress) -> [String] {
        var out: [String] = []
        for description in EngineConnectionStateTests.transitions(events, of: peer)
        where !(description.contains("--DeviceFound-->") && out.last == description) {
            out.append(description)
        }
        return out
    }

    static func found(_ link: EnginesOnVirtualLink) -> Bool {
        link.central.events.contains { if case .deviceFound(let device) = $0 { device.address == peer } else { false } }
    }

    /// The peripheral advertises; the central's events are taken.
    static func advertising() throws -> EnginesOnVirtualLink {
        var link = try EngineConnectionStateTests.link()
        link.perform(.startAdvertising(.named("Bluewire")), on: 1)
        _ = link.central.takeEvents()
        return link
    }

    static func scan(_ link: inout EnginesOnVirtualLink, duration: TimeSpan? = nil) throws {
        link.perform(.startScan(ScanParameters(), filter: AdvertisingFilter(addresses: [peer]), duration: duration), on: 0)
        try link.run(until: found, within: .seconds(5))
    }

    @Test("a watched peer scans along: StartScan, DeviceFound, StopScan; ScanCompleted after a duration; Connect while scanning goes Scanning → Connecting")
    func scanTransitions() throws {
        var link = try Self.advertising()
        let watch = link.perform(.watch(Self.peer), on: 0)
        #expect(link.central.result(watch) == .success(.done))
        #expect(link.central.engine.state(of: Self.peer) == .initial)
        #expect(Self.transitions(link.central.takeEvents(), of: Self.peer).isEmpty, "nothing moves until a scan starts")

        // StopScan.
        try Self.scan(&link)
        #expect(link.central.engine.state(of: Self.peer) == .disconnected(.scanning))
        let stop = link.perform(.stopScan, on: 0)
        try link.run(until: { $0.central.result(stop) != nil }, within: .seconds(2))
        #expect(link.central.engine.state(of: Self.peer) == .initial)
        #expect(Self.transitions(link.central.takeEvents(), of: Self.peer) == ConnectedTransitions.path(from: .initial, Self.scanning + [(.stopScan, .initial)]))

        // ScanCompleted when the duration ends in virtual time.
        try Self.scan(&link, duration: .seconds(1))
        try link.run(until: { $0.central.events.contains(.scanStopped) }, within: .seconds(2))
        #expect(Self.transitions(link.central.takeEvents(), of: Self.peer) == ConnectedTransitions.path(from: .initial, Self.scanning + [(.scanCompleted, .initial)]))
        #expect(link.central.engine.scanState == .initial)

        // Connect while scanning: the peer goes from Scanning to Connecting, the engine stops the scan.
        try Self.scan(&link)
        let connect = link.perform(.connect(Self.peer, LEConnectionParameters()), on: 0)
        try link.run(until: { $0.central.result(connect) != nil && $0.central.events.contains(.scanStopped) }, within: .seconds(5))
        guard case .success(.connected)? = link.central.result(connect) else {
            Issue.record("connect: \(String(describing: link.central.result(connect)))")
            return
        }
        let events = link.central.takeEvents()
        #expect(Self.transitions(events, of: Self.peer) == ConnectedTransitions.path(from: .initial, Self.scanning + [
            (.connect, .disconnected(.connecting)), (.connected, .connected(.idle)),
        ]))
        #expect(events.contains(.scanStateChanged(
            ConnectionTransition(from: .disconnected(.scanning), trigger: .stopScan, to: .initial, handledBy: .state), cause: nil)))
    }

    @Test("a peer that becomes known while a scan runs scans along from then on: StartScan at once, then the scan's StopScan")
    func peerKnownDuringAScan() throws {
        var link = try Self.advertising()
        try Self.scan(&link)
        _ = link.central.takeEvents()
        link.perform(.watch(Self.bystander), on: 0)
        #expect(link.central.engine.state(of: Self.bystander) == .disconnected(.scanning))
        link.perform(.watch(Self.bystander), on: 0)  // known already: nothing more
        let stop = link.perform(.stopScan, on: 0)
        try link.run(until: { $0.central.result(stop) != nil }, within: .seconds(2))
        #expect(Self.transitions(link.central.takeEvents(), of: Self.bystander) == ConnectedTransitions.path(from: .initial, [
            (.startScan, .disconnected(.scanning)), (.stopScan, .initial),
        ]))
    }

    @Test("a peer the engine does not know gets no machine from scan results: Initial, nothing emitted")
    func unknownPeerDoesNotScan() throws {
        var link = try Self.advertising()
        try Self.scan(&link)
        #expect(link.central.engine.state(of: Self.peer) == .initial)
        #expect(Self.transitions(link.central.takeEvents(), of: Self.peer).isEmpty)
    }

    @Test("a peer known from an earlier link scans along after it; one connected to during a scan joins it first (Initial → Scanning → Connecting)")
    func knownByConnecting() throws {
        var link = try Self.advertising()
        try Self.scan(&link)
        _ = link.central.takeEvents()
        let connect = link.perform(.connect(Self.peer, LEConnectionParameters()), on: 0)
        try link.run(until: { $0.central.result(connect) != nil }, within: .seconds(5))
        guard case .success(.connected(let connection))? = link.central.result(connect) else {
            Issue.record("connect: \(String(describing: link.central.result(connect)))")
            return
        }
        let disconnect = link.perform(.disconnect(handle: connection.handle, reason: .remoteUserTerminatedConnection), on: 0)
        try link.run(until: { $0.central.result(disconnect) != nil && $0.peripheral.engine.connectionHandles.isEmpty }, within: .seconds(5))
        let scan = link.perform(.startScan(ScanParameters(), filter: AdvertisingFilter(addresses: [Self.peer])), on: 0)
        try link.run(until: { $0.central.result(scan) != nil }, within: .seconds(2))
        // (DeviceFound may follow, once the peripheral advertises again.)
        #expect(Array(Self.transitions(link.central.takeEvents(), of: Self.peer).prefix(5)) == ConnectedTransitions.path(from: .initial, [
            (.startScan, .disconnected(.scanning)), (.connect, .disconnected(.connecting)), (.connected, .connected(.idle)),
        ]) + ["Connected.Idle --Disconnect--> Disconnected.Initial", "Disconnected.Initial --StartScan--> Disconnected.Scanning"])
    }

    @Test("a Hardware Error while scanning: a scanning known peer → Error with the code (Failure, not StopScan), once; reset leaves it")
    func hardwareErrorFailsScanningPeer() throws {
        var link = try EngineConnectionStateTests.link()
        link.perform(.watch(Self.bystander), on: 0)
        let scan = link.perform(.startScan(ScanParameters(), filter: AdvertisingFilter()), on: 0)
        try link.run(until: { $0.central.result(scan) != nil }, within: .seconds(2))
        link.central.controller.injectHardwareError(code: 0x42)
        link.settle()
        #expect(EngineConnectionStateTests.transitions(link.central.takeEvents(), of: Self.bystander) == [
            "Disconnected.Initial --StartScan--> Disconnected.Scanning",
            "Disconnected.Scanning --Failure--> Error (hardwareError(66))",
        ])
        #expect(link.central.engine.scanState == .error)
        #expect(link.central.engine.failure(of: Self.bystander) == .hardwareError(0x42))
        let reset = link.perform(.reset(Self.bystander), on: 0)
        #expect(link.central.result(reset) == .success(.done))
        #expect(link.central.engine.state(of: Self.bystander) == .initial)
    }
}
