import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import BluewireTesting
import Testing

/// The engine's per-peer connection state machine (HostEngine+PeerStates, Docs/Design.md) between two
/// engines on the virtual link, in virtual time: every transition the engine reaches for the
/// connection's life, in order, with the cause of each `Error`, and the refusals it reports as
/// `.refused` errors.
@Suite("Host engine: connection state machine per peer")
struct EngineConnectionStateTests {
    static let peer = EnginesOnVirtualLink.peripheralAddress
    /// An address nobody advertises on the link: an attempt to it never completes.
    static let absent = BluetoothAddress(value: 0xC4_5A_17_00_E0_99, type: .random)

    /// (from, trigger, to, cause) of every `.stateChanged` the central emitted for `peer`.
    static func transitions(_ events: [HostEngineEvent], of peer: BluetoothAddress) -> [String] {
        events.compactMap {
            guard case .stateChanged(let address, let transition, let cause) = $0, address == peer else { return nil }
            return cause.map { "\(transition) (\($0))" } ?? "\(transition)"
        }
    }

    static func link() throws -> EnginesOnVirtualLink {
        try EnginesOnVirtualLink(timing: .radio(), engine: { _, configuration in configuration.connectionTimeout = .seconds(2) })
    }

    @Test("connect → Connecting → Connected.Idle; disconnection → Initial")
    func connectAndDisconnect() throws {
        var link = try Self.link()
        #expect(link.central.engine.state(of: Self.peer) == .initial)
        _ = link.central.takeEvents()
        let handle = try link.connect()
        #expect(link.central.engine.state(of: Self.peer) == .connected(.idle))
        let disconnect = link.perform(.disconnect(handle: handle, reason: .remoteUserTerminatedConnection), on: 0)
        try link.run(until: { $0.central.result(disconnect) != nil }, within: .seconds(2))
        #expect(Self.transitions(link.central.takeEvents(), of: Self.peer) == [
            "Disconnected.Initial --Connect--> Disconnected.Connecting",
            "Disconnected.Connecting --Connected--> Connected.Idle",
            "Connected.Idle --Disconnect--> Disconnected.Initial",
        ])
        #expect(link.central.engine.state(of: Self.peer) == .initial)
        // The peripheral's side of the link has no machine (the table models the central).
        #expect(Self.transitions(link.peripheral.takeEvents(), of: EnginesOnVirtualLink.centralAddress).isEmpty)
    }

    @Test("connect to a connected peer is refused with the state and Connect; nothing is sent")
    func connectWhileConnectedRefused() throws {
        var link = try Self.link()
        _ = try link.connect()
        _ = link.central.takeEvents()
        let again = link.perform(.connect(Self.peer, LEConnectionParameters()), on: 0)
        #expect(link.central.result(again) == .failure(.refused(state: .connected(.idle), trigger: .connect)))
        #expect(Self.transitions(link.central.takeEvents(), of: Self.peer).isEmpty)
        #expect(link.central.engine.state(of: Self.peer) == .connected(.idle))
    }

    @Test("reset outside Error is refused with the state and Reset")
    func resetOutsideErrorRefused() throws {
        var link = try Self.link()
        let reset = link.perform(.reset(Self.peer), on: 0)
        #expect(link.central.result(reset) == .failure(.refused(state: .initial, trigger: .reset)))
        _ = try link.connect()
        let resetConnected = link.perform(.reset(Self.peer), on: 0)
        #expect(link.central.result(resetConnected) == .failure(.refused(state: .connected(.idle), trigger: .reset)))
        #expect(link.central.engine.state(of: Self.peer) == .connected(.idle))
    }

    @Test("a timed-out attempt → Error with .connectionTimeout; connect refused in Error; reset → Initial")
    func timeoutToErrorThenReset() throws {
        var link = try Self.link()
        _ = link.central.takeEvents()
        let connect = link.perform(.connect(Self.absent, LEConnectionParameters()), on: 0)
        #expect(link.central.engine.state(of: Self.absent) == .disconnected(.connecting))
        try link.run(until: { $0.central.result(connect) != nil }, within: .seconds(5))
        #expect(link.central.result(connect) == .failure(.connectionTimeout))
        #expect(link.central.engine.state(of: Self.absent) == .error)
        #expect(link.central.engine.failure(of: Self.absent) == .connectionTimeout)
        link.run(for: .milliseconds(100))  // the Create Connection Cancel goes out and is answered

        let again = link.perform(.connect(Self.absent, LEConnectionParameters()), on: 0)
        #expect(link.central.result(again) == .failure(.refused(state: .error, trigger: .connect)))
        let reset = link.perform(.reset(Self.absent), on: 0)
        #expect(link.central.result(reset) == .success(.done))
        #expect(link.central.engine.failure(of: Self.absent) == nil)
        #expect(Self.transitions(link.central.takeEvents(), of: Self.absent) == [
            "Disconnected.Initial --Connect--> Disconnected.Connecting",
            "Disconnected.Connecting --Failure--> Error (connectionTimeout)",
            "Error --Reset--> Disconnected.Initial",
        ])
        // Connecting again is possible after the reset; the peer is there now.
        _ = try link.connect()
        #expect(link.central.engine.state(of: Self.peer) == .connected(.idle))
    }

    @Test("a connect with its own timeout ends at that timeout in virtual time, not at the configuration's")
    func perRequestTimeout() throws {
        var link = try Self.link()  // configured: 2 s
        let connect = link.perform(.connect(Self.absent, LEConnectionParameters(), timeout: .milliseconds(500)), on: 0)
        link.run(for: .milliseconds(450))
        #expect(link.central.result(connect) == nil, "still connecting 50 ms before its timeout")
        try link.run(until: { $0.central.result(connect) != nil }, within: .milliseconds(100))
        #expect(link.central.result(connect) == .failure(.connectionTimeout))
        #expect(link.central.engine.failure(of: Self.absent) == .connectionTimeout)
    }

    @Test("cancelConnect → Disconnect: Connecting → Initial, not a failure")
    func cancelledAttempt() throws {
        var link = try Self.link()
        _ = link.central.takeEvents()
        let connect = link.perform(.connect(Self.absent, LEConnectionParameters()), on: 0)
        link.run(for: .milliseconds(50))
        let cancel = link.perform(.cancelConnect, on: 0)
        try link.run(until: { $0.central.result(cancel) != nil }, within: .seconds(1))
        #expect(link.central.result(connect) == .failure(.cancelled))
        #expect(Self.transitions(link.central.takeEvents(), of: Self.absent) == [
            "Disconnected.Initial --Connect--> Disconnected.Connecting",
            "Disconnected.Connecting --Disconnect--> Disconnected.Initial",
        ])
        #expect(link.central.engine.state(of: Self.absent) == .initial)
        #expect(link.central.engine.failure(of: Self.absent) == nil)
    }

    @Test("Hardware Error: a connected peer → Error with the code as the cause, no Disconnect after; Initial peers stay")
    func hardwareErrorToError() throws {
        var link = try Self.link()
        let handle = try link.connect()
        // A second peer known to the engine but in Initial (a cancelled attempt): nothing to fail.
        let other = link.perform(.connect(Self.absent, LEConnectionParameters()), on: 0)
        #expect(link.central.result(other) == .failure(.connectionAttemptInProgress) || link.central.result(other) == nil)
        if link.central.result(other) == nil {
            let cancel = link.perform(.cancelConnect, on: 0)
            try link.run(until: { $0.central.result(cancel) != nil }, within: .seconds(1))
        }
        _ = link.central.takeEvents()
        link.central.controller.injectHardwareError(code: 0x42)
        link.settle()
        let events = link.central.takeEvents()
        #expect(Self.transitions(events, of: Self.peer) == ["Connected.Idle --Failure--> Error (hardwareError(66))"])
        #expect(Self.transitions(events, of: Self.absent).isEmpty)
        #expect(events.contains(.disconnected(handle: handle, reason: .hardwareFailure)))
        #expect(link.central.engine.state(of: Self.peer) == .error)
        #expect(link.central.engine.failure(of: Self.peer) == .hardwareError(0x42))
        #expect(link.central.engine.state(of: Self.absent) == .initial)
    }

    @Test("an ATT transaction timeout → Error with .att(.transactionTimeout); the disconnection that follows leaves it there")
    func attTimeoutToError() throws {
        var link = try Self.link()
        let handle = try link.connect()
        _ = link.central.takeEvents()
        // The peripheral's controller stops passing anything to its host: the Read is never answered.
        link.peripheral.controller.faults.isUnresponsive = true
        link.perform(.gatt(connection: handle, .cachedDiscovery), on: 0)
        let read = link.perform(.gatt(connection: handle, .read(handle: 0x0003)), on: 0)
        try link.run(until: { $0.central.result(read) != nil }, within: .seconds(40))
        #expect(link.central.result(read) == .failure(.att(.transactionTimeout)))
        link.run(for: .seconds(10))  // the engine drops the link (§3.3.3)
        let events = link.central.takeEvents()
        #expect(Self.transitions(events, of: Self.peer) == [
            "Connected.Idle --DiscoverCharacteristics--> Connected.DiscoveringCharacteristics",
            "Connected.DiscoveringCharacteristics --OperationCompleted--> Connected.DiscoveredCharacteristic",
            "Connected.DiscoveredCharacteristic --Read--> Connected.ReadingCharacteristic",
            "Connected.ReadingCharacteristic --Failure--> Error (att(BluewireATT.ATTBearerError.transactionTimeout))",
        ])
        #expect(link.central.engine.state(of: Self.peer) == .error)
        #expect(link.central.engine.failure(of: Self.peer) == .att(.transactionTimeout))
    }

    @Test("transportEnded: a pending attempt → Error with .transportEnded")
    func transportEndedFailsPending() throws {
        var link = try Self.link()
        _ = link.central.takeEvents()
        _ = link.perform(.connect(Self.absent, LEConnectionParameters()), on: 0)
        link.central.engine.transportEnded()
        var events: [HostEngineEvent] = []
        while let output = link.central.engine.nextOutput() { if case .event(let event) = output { events.append(event) } }
        events = link.central.takeEvents() + events
        #expect(Self.transitions(events, of: Self.absent) == [
            "Disconnected.Initial --Connect--> Disconnected.Connecting",
            "Disconnected.Connecting --Failure--> Error (transportEnded)",
        ])
        #expect(link.central.engine.failure(of: Self.absent) == .transportEnded)
    }
}
