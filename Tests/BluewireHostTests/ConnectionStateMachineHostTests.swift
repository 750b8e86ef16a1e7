@_spi(Testing) import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireTesting
import HostTestSupport
import Synchronization
import Testing

/// Every transition of the connection state machine's table (Docs/Design.md, the doc comment of
/// `ConnectionStateMachine`) taken by a real `BluetoothHost` on the virtual link, as the host's public
/// API reports it: `transitions(of:)` and `state(of:)` for a peer address, the scan's `onTransition`
/// and `scanState`. Order of events and virtual time only (`FaultBench`: immediate timing, a
/// `TestClock`), never wall-clock durations.
///
/// Not reachable on a host, by design: `Disconnected.Initial --Failure-->`: an idle peer has no link
/// or attempt a failure could break, so a Hardware Error or a lost transport leaves it in Initial
/// (the unit matrix in `ConnectionStateMachineTests` covers the table row itself).
@Suite("Connection state machine on a real host", .timeLimit(.minutes(1)))
struct ConnectionStateMachineHostTests {
    static let peer = FaultBench.peripheralAddress
    /// A peer the central knows (it asked for its transitions) but never connects to.
    static let bystander = BluetoothAddress.randomStatic(0x0000_0000_FC03)

    static func describe(_ transitions: [PeerTransition]) -> [String] { collapsed(transitions.map { "\($0.transition)" }) }

    /// A device is reported again when its scan response adds to its advertising data: repeated
    /// DeviceFound self-transitions count as one.
    static func collapsed(_ descriptions: [String]) -> [String] {
        var out: [String] = []
        for description in descriptions where !(description.contains("--DeviceFound-->") && out.last == description) {
            out.append(description)
        }
        return out
    }

    @Test("connect, every GATT phase and disconnect: the peer's machine takes each connected transition of the table, in order")
    func connectedTransitions() async throws {
        let bench = try await FaultBench.make()
        let central = bench.central
        #expect(await central.state(of: Self.peer) == .initial, "a peer the host never connected to is Disconnected.Initial")
        let log = Transcript(await central.transitions(of: Self.peer))
        let connection = try await bench.connect()
        #expect(await central.state(of: Self.peer) == .connected(.idle))
        #expect(await connection.state == .connected(.idle))
        let gatt = await connection.gatt

        // Refused, not ignored: a read before discovery has no handle to read (Connected.Idle).
        await #expect(throws: GATTError.refused(ConnectionTriggerRefused(state: .connected(.idle), trigger: .read))) {
            _ = try await gatt.read(handle: bench.fixture.counter.valueHandle)
        }

        let service = try #require(try await gatt.discoverServices(uuid: FaultDatabase.service).first)
        let characteristics = try await gatt.discoverCharacteristics(of: service)
        _ = try await gatt.discoverCharacteristics(of: service)
        let counter = try #require(characteristics.first { $0.uuid == BluetoothUUID(0xFA01) })
        let long = try #require(characteristics.first { $0.uuid == BluetoothUUID(0xFA02) })
        _ = try await gatt.read(counter)
        try await gatt.write([1, 2, 3], to: long)
        let subscription = try await gatt.subscribe(to: counter)
        _ = try await gatt.read(counter)
        try await gatt.write([4], to: long)
        try await gatt.unsubscribe(subscription)
        _ = try await gatt.discoverServices(uuid: FaultDatabase.service)
        _ = try await gatt.discoverCharacteristics(of: service)
        _ = try await gatt.subscribe(to: counter)
        // Service Changed would call for this: rediscovery forgets the subscription.
        _ = try await gatt.discoverServices(uuid: FaultDatabase.service)
        try await connection.disconnect()

        let expected = ConnectedTransitions.path(
            from: .initial, ConnectedTransitions.connect + ConnectedTransitions.everyConnectedPhase + ConnectedTransitions.disconnect)
        let seen = await log.wait(for: expected.count) { _ in true }
        #expect(Self.describe(seen) == expected)
        #expect(seen.last?.transition.handledBy == .connectedSuperstate, "Disconnect is handled by the Connected superstate")
        #expect(seen.allSatisfy { $0.cause == nil && $0.peer == Self.peer })
        #expect(await central.state(of: Self.peer) == .initial, "the peer's state outlives the link")
        #expect(await connection.state == .initial)
        await bench.close()
    }

    @Test("a connection attempt is Disconnected.Connecting until it completes; a cancelled one goes back to Initial (Disconnect: not a failure)")
    func connectingThenCancelled() async throws {
        let bench = try await FaultBench.make()
        let central = bench.central
        try await bench.peripheral.stopAdvertising()
        let log = Transcript(await central.transitions(of: Self.peer))
        let attempt = Task { try await central.connect(to: Self.peer, timeout: .seconds(5)) }
        await log.wait(for: 1) { $0.trigger == .connect }
        #expect(await central.state(of: Self.peer) == .disconnected(.connecting))
        #expect(await central.isConnecting)
        await central.cancelConnectionAttempt()
        guard case .failure(HostError.connectionFailed(let address, .operationCancelledByHost)) = await attempt.result else {
            Issue.record("expected connectionFailed(Operation Cancelled by Host), got \(await attempt.result)")
            await bench.close()
            return
        }
        #expect(address == Self.peer)
        let seen = await log.wait(for: 2) { _ in true }
        #expect(Self.describe(seen) == ConnectedTransitions.path(from: .initial, [(.connect, .disconnected(.connecting)), (.disconnect, .initial)]))
        #expect(seen.last?.transition.handledBy == .state)
        #expect(await central.failure(of: Self.peer) == nil, "a cancel is no failure")

        // Connecting → Connected on LE Connection Complete.
        _ = try await bench.peripheral.startAdvertising(try Advertisement(name: "Faults", services: [FaultDatabase.service]))
        let connection = try await bench.connect()
        let all = await log.wait(for: 4) { _ in true }
        #expect(Array(Self.describe(all).suffix(2)) == ConnectedTransitions.path(from: .initial, [(.connect, .disconnected(.connecting)), (.connected, .connected(.idle))]))
        try await connection.disconnect()
        await bench.close()
    }

    @Test("a connection attempt that times out (virtual time) fails: Connecting → Error with the cause; Connect is refused until reset, Reset elsewhere is refused")
    func connectTimeoutIsAFailure() async throws {
        let bench = try await FaultBench.make()
        let central = bench.central
        try await bench.peripheral.stopAdvertising()
        let log = Transcript(await central.transitions(of: Self.peer))
        // The deadline is fixed when `connect` is called; a host timer registered after an advance
        // that passed it fires at once, so no wait for the timer is needed.
        let attempt = Task { try await central.connect(to: Self.peer, timeout: .seconds(1)) }
        await log.wait(for: 1) { $0.trigger == .connect }
        await bench.clock.advance(by: .milliseconds(999))
        #expect(await central.state(of: Self.peer) == .disconnected(.connecting), "1 ms before the timeout it still connects")
        await bench.clock.advance(by: .milliseconds(1))
        guard case .failure(HostError.connectionTimeout(let address)) = await attempt.result else {
            Issue.record("expected connectionTimeout, got \(await attempt.result)")
            await bench.close()
            return
        }
        #expect(address == Self.peer)
        let seen = await log.wait(for: 2) { _ in true }
        #expect(Self.describe(seen) == ConnectedTransitions.path(from: .initial, [(.connect, .disconnected(.connecting)), (.failure, .error)]))
        #expect(seen.last?.transition.handledBy == .disconnectedSuperstate)
        if case .host(.connectionTimeout(Self.peer))? = seen.last?.cause {} else {
            Issue.record("the Error transition carries the cause: \(String(describing: seen.last?.cause))")
        }
        #expect(await central.state(of: Self.peer) == .error)
        if case .host(.connectionTimeout)? = await central.failure(of: Self.peer) {} else { Issue.record("failure(of:) names the timeout") }

        _ = try await bench.peripheral.startAdvertising(try Advertisement(name: "Faults", services: [FaultDatabase.service]))
        try await bench.peripheral.until("the peripheral advertises") { $0.advertising }
        await #expect(throws: HostError.self, "Error accepts only Reset: connect is refused") {
            _ = try await central.connect(to: Self.peer, parameters: FaultBench.connectionParameters)
        }
        do {
            _ = try await central.connect(to: Self.peer, parameters: FaultBench.connectionParameters)
        } catch {
            guard case .refused(let refusal) = error else { throw error }
            #expect(refusal == ConnectionTriggerRefused(state: .error, trigger: .connect))
        }
        try await central.reset(Self.peer)
        #expect(await central.state(of: Self.peer) == .initial)
        #expect(await central.failure(of: Self.peer) == nil)
        do {
            try await central.reset(Self.peer)
            Issue.record("Reset outside Error must be refused")
        } catch {
            guard case .refused(let refusal) = error else { throw error }
            #expect(refusal == ConnectionTriggerRefused(state: .initial, trigger: .reset))
        }
        let connection = try await central.connect(to: Self.peer, parameters: FaultBench.connectionParameters)
        let all = await log.wait(for: 5) { _ in true }
        #expect(Array(Self.describe(all).suffix(3)) == ConnectedTransitions.path(from: .error, [
            (.reset, .initial), (.connect, .disconnected(.connecting)), (.connected, .connected(.idle)),
        ]))
        try await connection.disconnect()
        await bench.close()
    }

    @Test("LE Create Connection itself failing (the controller never answers it: the command times out in virtual time) is a Failure with the command's error")
    func createConnectionCommandFailure() async throws {
        let bench = try await FaultBench.make(commandTimeout: .seconds(2))
        let central = bench.central
        let log = Transcript(await central.transitions(of: Self.peer))
        bench.centralController.faults.silentOpcodes = [HCIOpcode.leCreateConnection.rawValue, HCIOpcode.leExtendedCreateConnection.rawValue]
        let finished = Completion()
        let attempt = Task {
            defer { finished.finish() }
            return try await central.connect(to: Self.peer, timeout: .seconds(60))
        }
        await log.wait(for: 1) { $0.trigger == .connect }
        // The command's timeout starts when it is sent, after LE Set Default PHY: move virtual time a
        // command timeout at a time until the attempt ends (well before its own 60 s).
        for _ in 0..<10 where !finished.isDone {
            await bench.clock.advance(by: .seconds(2))
            try await bench.settleQuiet("the host has handled what the timeout caused")
        }
        guard case .failure(HostError.command) = await attempt.result else {
            Issue.record("expected the command's error, got \(await attempt.result)")
            await bench.close()
            return
        }
        let failure = try #require(await log.wait(for: 1) { $0.trigger == .failure }.first)
        #expect("\(failure.transition)" == "Disconnected.Connecting --Failure--> Error")
        if case .host(.command)? = failure.cause {} else { Issue.record("cause: \(String(describing: failure.cause))") }
        bench.centralController.faults.silentOpcodes = []
        await bench.close()
    }

    @Test("scanning: StartScan, DeviceFound, StopScan and ScanCompleted on the scan path and on a known peer; Connect while scanning goes Scanning → Connecting")
    func scanTransitions() async throws {
        let bench = try await FaultBench.make()
        let central = bench.central
        let log = Transcript(await central.transitions(of: Self.peer))
        let filter = AdvertisingFilter(addresses: [Self.peer])

        // StopScan.
        let stopped = TransitionRecorder()
        var scan = await central.scan(filter: filter, onTransition: stopped.observer).makeAsyncIterator()
        #expect(try await scan.next()?.address == Self.peer)
        #expect(await central.scanState == .disconnected(.scanning))
        #expect(await central.state(of: Self.peer) == .disconnected(.scanning))
        await central.stopScan()
        #expect(try await scan.next()?.address == nil, "the sequence finished")
        let scanning: [(ConnectionTrigger, ConnectionState)] = [(.startScan, .disconnected(.scanning)), (.deviceFound, .disconnected(.scanning))]
        #expect(Self.collapsed(stopped.descriptions) == ConnectedTransitions.path(from: .initial, scanning + [(.stopScan, .initial)]))
        await log.wait(for: 1) { $0.trigger == .stopScan }
        #expect(Self.describe(log.elements) == ConnectedTransitions.path(from: .initial, scanning + [(.stopScan, .initial)]))

        // ScanCompleted when the duration ends in virtual time.
        let completed = TransitionRecorder()
        scan = await central.scan(filter: filter, duration: .milliseconds(100), onTransition: completed.observer).makeAsyncIterator()
        #expect(try await scan.next()?.address == Self.peer)
        await bench.clock.waitForSleepers()
        await bench.clock.advance(by: .milliseconds(99))
        #expect(await central.scanState == .disconnected(.scanning), "1 ms before its duration the scan still runs")
        await bench.clock.advance(by: .milliseconds(1))
        while try await scan.next() != nil {}
        #expect(Self.collapsed(completed.descriptions) == ConnectedTransitions.path(from: .initial, scanning + [(.scanCompleted, .initial)]))
        await log.wait(for: 1) { $0.trigger == .scanCompleted }
        #expect(Array(Self.describe(log.elements).suffix(3)) == ConnectedTransitions.path(from: .initial, scanning + [(.scanCompleted, .initial)]))
        #expect(await central.scanState == .initial)

        // Connect while scanning: the host stops the scan (StopScan on the scan path) and the peer goes
        // from Scanning to Connecting.
        let interrupted = TransitionRecorder()
        scan = await central.scan(filter: filter, onTransition: interrupted.observer).makeAsyncIterator()
        #expect(try await scan.next()?.address == Self.peer)
        let connection = try await central.connect(to: Self.peer, parameters: FaultBench.connectionParameters)
        #expect(interrupted.descriptions.last == "Disconnected.Scanning --StopScan--> Disconnected.Initial")
        await log.wait(for: 1) { $0.trigger == .connected }
        #expect(Array(Self.describe(log.elements).suffix(4)) == ConnectedTransitions.path(from: .initial, scanning + [
            (.connect, .disconnected(.connecting)), (.connected, .connected(.idle)),
        ]))
        try await connection.disconnect()
        await bench.close()
    }

    @Test("a peer that becomes known while a scan runs scans along from then on: StartScan, then the scan's StopScan")
    func peerKnownDuringAScan() async throws {
        let bench = try await FaultBench.make()
        let central = bench.central
        var scan = await central.scan(filter: AdvertisingFilter(addresses: [Self.peer])).makeAsyncIterator()
        #expect(try await scan.next()?.address == Self.peer)
        let log = Transcript(await central.transitions(of: Self.bystander))
        #expect(await central.state(of: Self.bystander) == .disconnected(.scanning))
        await central.stopScan()
        await log.wait(for: 1) { $0.trigger == .stopScan }
        #expect(Self.describe(log.elements) == ConnectedTransitions.path(from: .initial, [(.startScan, .disconnected(.scanning)), (.stopScan, .initial)]))
        await bench.close()
    }

    @Test("a Hardware Error is a failure: the link, the scan and a scanning peer go to Error with the cause; resetScan and reset leave it")
    func hardwareErrorFailsEveryMachine() async throws {
        let bench = try await FaultBench.make()
        let central = bench.central
        let log = Transcript(await central.transitions(of: Self.peer))
        let bystander = Transcript(await central.transitions(of: Self.bystander))
        let connection = try await bench.connect()
        let events = await central.events()
        let scanLog = TransitionRecorder()
        // The peripheral advertises again once connected: the scan finds it, so it runs.
        var scan = await central.scan(filter: AdvertisingFilter(addresses: [Self.peer]), onTransition: scanLog.observer).makeAsyncIterator()
        #expect(try await scan.next()?.address == Self.peer)
        await bystander.wait(for: 1) { $0.trigger == .startScan }
        #expect(await central.state(of: Self.peer) == .connected(.idle), "a connected peer does not scan along")

        bench.centralController.injectHardwareError(code: 0x42)
        for await event in events { if case .hardwareError = event { break } }

        await #expect(throws: HostError.self) { _ = try await scan.next() }
        #expect(scanLog.descriptions.last == "Disconnected.Scanning --Failure--> Error", "a failed scan is no StopScan")
        #expect(!scanLog.descriptions.contains { $0.contains("StopScan") })
        #expect(await central.scanState == .error)

        let peerFailure = try #require(await log.wait(for: 1) { $0.trigger == .failure }.first)
        #expect("\(peerFailure.transition)" == "Connected.Idle --Failure--> Error")
        #expect(peerFailure.transition.handledBy == .connectedSuperstate)
        if case .host(.hardwareError(0x42))? = peerFailure.cause {} else { Issue.record("cause: \(String(describing: peerFailure.cause))") }
        #expect(await connection.state == .error)
        #expect(await connection.disconnection() == .hardwareFailure)

        let bystanderFailure = try #require(await bystander.wait(for: 1) { $0.trigger == .failure }.first)
        #expect("\(bystanderFailure.transition)" == "Disconnected.Scanning --Failure--> Error")
        #expect(bystanderFailure.transition.handledBy == .disconnectedSuperstate)

        // Scanning again is refused until the scan path is reset; Reset is refused outside Error.
        var refused = await central.scan().makeAsyncIterator()
        do {
            _ = try await refused.next()
            Issue.record("a scan from Error must be refused")
        } catch {
            guard case .refused(let refusal) = error else { throw error }
            #expect(refusal == ConnectionTriggerRefused(state: .error, trigger: .startScan))
        }
        try await central.resetScan()
        #expect(await central.scanState == .initial)
        await #expect(throws: HostError.self) { try await central.resetScan() }
        try await central.reset(Self.peer)
        try await central.reset(Self.bystander)
        #expect(await central.state(of: Self.peer) == .initial)
        #expect(Self.describe(await log.wait(for: 1) { $0.trigger == .reset }) == ["Error --Reset--> Disconnected.Initial"])

        // Usable again once the peripheral's side has timed the dead link out.
        await bench.clock.advance(by: FaultBench.supervisionTimeout)
        try await bench.peripheral.until("the peripheral sees the link gone") { $0.links == 0 }
        let again = try await bench.connect()
        #expect(await central.state(of: Self.peer) == .connected(.idle))
        try await again.disconnect()
        await bench.close()
    }

    @Test("the transport ending is a failure: a connected peer goes to Error with the transport's error as the cause")
    func transportLossFailsTheLink() async throws {
        let bench = try await FaultBench.make()
        let central = bench.central
        let log = Transcript(await central.transitions(of: Self.peer))
        let connection = try await bench.connect()
        await bench.centralTransport.close()
        #expect(await connection.disconnection() == .connectionTerminatedByLocalHost)
        let failure = try #require(await log.wait(for: 1) { $0.trigger == .failure }.first)
        #expect("\(failure.transition)" == "Connected.Idle --Failure--> Error")
        if case .host(.transport(.closed))? = failure.cause {} else { Issue.record("cause: \(String(describing: failure.cause))") }
        #expect(await central.state(of: Self.peer) == .error)
        #expect(!log.elements.contains { $0.trigger == .disconnect }, "the link ended in Error, not in Initial")
        await bench.close()
    }

    @Test("an ATT transaction timeout (30 s of virtual time) is a failure: Connected.ReadingCharacteristic → Error with the bearer's error")
    func transactionTimeoutFailsTheLink() async throws {
        let bench = try await FaultBench.make()
        let central = bench.central
        let log = Transcript(await central.transitions(of: Self.peer))
        let connection = try await bench.connect()
        let gatt = await connection.gatt
        let service = try #require(try await gatt.discoverServices(uuid: FaultDatabase.service).first)
        let counter = try #require(try await gatt.discoverCharacteristics(of: service).first { $0.uuid == BluetoothUUID(0xFA01) })
        bench.peripheralController.faults.isUnresponsive = true
        let read = Task { try await gatt.read(counter) }
        await log.wait(for: 1) { $0.trigger == .read }
        try await bench.settleQuiet("the read waits") { await central.diagnostics.requestWaiters == 1 }
        await bench.clock.advance(by: .seconds(30))
        await #expect(throws: GATTError.bearer(.transactionTimeout)) { try await read.value }
        let failure = try #require(await log.wait(for: 1) { $0.trigger == .failure }.first)
        #expect("\(failure.transition)" == "Connected.ReadingCharacteristic --Failure--> Error")
        if case .gatt(.bearer(.transactionTimeout))? = failure.cause {} else { Issue.record("cause: \(String(describing: failure.cause))") }
        // Core Vol 3 Part F §3.3.3: the host drops the link; the machine stays in Error.
        _ = await connection.disconnection()
        #expect(await central.state(of: Self.peer) == .error)
        #expect(gatt.state == .error)
        bench.peripheralController.faults.isUnresponsive = false
        await bench.close()
    }
}

/// Collects a scan's `onTransition` calls (made on the host's executor).
final class TransitionRecorder: Sendable {
    private let entries = Mutex<[ConnectionTransition]>([])
    var observer: @Sendable (ConnectionTransition) -> Void { { [self] transition in entries.withLock { $0.append(transition) } } }
    var descriptions: [String] { entries.withLock { $0.map { "\($0)" } } }
}
