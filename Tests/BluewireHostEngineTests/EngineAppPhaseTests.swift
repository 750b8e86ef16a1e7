import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHostEngine
import BluewireTesting
import HostTestSupport
import Testing

/// GATT phases the application runs itself (`.beginGATTPhase` / `.endGATTPhase`, HostEngine+AppPhases)
/// around its own `.attRequest`s, as `BluetoothHost`'s `GATTClient.phase` does, between two engines on
/// the virtual link with radio timing: the transitions `ConnectionStateMachineHostTests` expects of a
/// real host, the table's refusals, and that an engine procedure and an application phase never end
/// each other's phase.
@Suite("Host engine: GATT phases the application runs")
struct EngineAppPhaseTests {
    static let peer = EngineGATTPhaseTests.peer
    typealias Scene = EngineGATTPhaseTests.Scene

    /// One of the application's procedures: begin, one ATT request, end; returns the server's answer.
    static func applicationPhase(
        _ scene: inout Scene, _ phase: ApplicationGATTPhase, _ request: ATTPDU, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ATTPDU? {
        let begin = scene.link.perform(.beginGATTPhase(connection: scene.handle, phase), on: 0)
        #expect(scene.link.central.result(begin) == .success(.done), "begin \(phase)", sourceLocation: sourceLocation)
        let id = scene.link.perform(.gatt(connection: scene.handle, .attRequest(request)), on: 0)
        try scene.link.run(until: { $0.central.result(id) != nil }, within: .seconds(5))
        let end = scene.link.perform(.endGATTPhase(connection: scene.handle, failure: nil), on: 0)
        #expect(scene.link.central.result(end) == .success(.done), "end \(phase)", sourceLocation: sourceLocation)
        guard case .success(.attResponse(let response))? = scene.link.central.result(id) else { return nil }
        return response
    }

    /// An engine procedure, run to its end; returns its result.
    static func engine(_ scene: inout Scene, _ request: GATTClientRequest) throws -> Result<HostCompletion, HostEngineError>? {
        let id = scene.link.perform(.gatt(connection: scene.handle, request), on: 0)
        try scene.link.run(until: { $0.central.result(id) != nil }, within: .seconds(5))
        return scene.link.central.result(id)
    }

    @Test("the application's procedures in phases, mixed with the engine's: every connected transition of BluetoothHost's GATT client, in order")
    func bluetoothHostPath() throws {
        var scene = try EngineGATTPhaseTests.scene()
        let value = scene.readable.valueHandle
        let byUUID = ATTPDU.findByTypeValueRequest(startingHandle: 0x0001, endingHandle: 0xFFFF, attributeType: 0x2800, attributeValue: [0x10, 0xFE])
        let characteristics = ATTPDU.readByTypeRequest(startingHandle: 0x0001, endingHandle: 0xFFFF, attributeType: BluetoothUUID(0x2803))

        // discoverServices(uuid:), then discoverCharacteristics(of:) twice, as the host test does.
        guard case .findByTypeValueResponse? = try Self.applicationPhase(&scene, .discoverServices, byUUID) else {
            Issue.record("Find By Type Value found no service")
            return
        }
        guard case .readByTypeResponse? = try Self.applicationPhase(&scene, .discoverCharacteristics, characteristics) else {
            Issue.record("Read By Type found no characteristic")
            return
        }
        _ = try Self.applicationPhase(&scene, .discoverCharacteristics, characteristics)
        #expect(try Self.engine(&scene, .read(handle: value)) == .success(.value([0x11])))
        #expect(try Self.engine(&scene, .write(handle: value, value: [1, 2, 3])) == .success(.done))
        _ = try Self.engine(&scene, .subscribe(scene.readable, indications: false, descriptorHandle: nil))
        #expect(try Self.engine(&scene, .read(handle: value)) == .success(.value([1, 2, 3])))
        #expect(try Self.engine(&scene, .write(handle: value, value: [4])) == .success(.done))
        _ = try Self.engine(&scene, .unsubscribe(scene.readable, descriptorHandle: nil))
        _ = try Self.applicationPhase(&scene, .discoverServices, byUUID)
        _ = try Self.applicationPhase(&scene, .discoverCharacteristics, characteristics)
        _ = try Self.engine(&scene, .subscribe(scene.readable, indications: false, descriptorHandle: nil))
        // Service Changed would call for this: rediscovery forgets the subscription.
        _ = try Self.applicationPhase(&scene, .discoverServices, byUUID)

        // What ConnectionStateMachineHostTests.connectedTransitions expects between Connected and Disconnect.
        #expect(EngineGATTPhaseTests.transitions(scene.link.central.takeEvents())
            == ConnectedTransitions.path(from: .connected(.idle), ConnectedTransitions.everyConnectedPhase))
        #expect(scene.link.central.engine.state(of: Self.peer) == .connected(.idle))
    }

    @Test("before any discovery a read phase is refused in Connected.Idle, nothing changes, and ending it is refused too")
    func refusedBeforeDiscovery() throws {
        var scene = try EngineGATTPhaseTests.scene()
        let begin = scene.link.perform(.beginGATTPhase(connection: scene.handle, .read), on: 0)
        #expect(scene.link.central.result(begin) == .failure(.refused(state: .connected(.idle), trigger: .read)))
        let end = scene.link.perform(.endGATTPhase(connection: scene.handle, failure: nil), on: 0)
        #expect(scene.link.central.result(end) == .failure(.refused(state: .connected(.idle), trigger: .operationCompleted)))
        #expect(EngineGATTPhaseTests.transitions(scene.link.central.takeEvents()).isEmpty)
        #expect(scene.link.central.engine.state(of: Self.peer) == .connected(.idle))
        let unknown = scene.link.perform(.beginGATTPhase(connection: scene.handle &+ 7, .discoverServices), on: 0)
        #expect(scene.link.central.result(unknown) == .failure(.unknownConnection(scene.handle &+ 7)))
    }

    @Test("one phase at a time: an engine procedure is refused inside the application's phase and sends nothing; an MTU exchange inside it does not end it; only its end does")
    func engineProcedureInsideApplicationPhase() throws {
        var scene = try EngineGATTPhaseTests.scene()
        let handle = scene.handle, value = scene.readable.valueHandle
        #expect(try Self.engine(&scene, .cachedDiscovery) == .success(.done))
        let reading = ConnectionState.connected(.readingCharacteristic(notificationsEnabled: false))

        let begin = scene.link.perform(.beginGATTPhase(connection: handle, .read), on: 0)
        #expect(scene.link.central.result(begin) == .success(.done))
        let before = EngineGATTPhaseTests.attOpcodes(scene.link).count
        let read = scene.link.perform(.gatt(connection: handle, .read(handle: value)), on: 0)
        #expect(scene.link.central.result(read) == .failure(.refused(state: reading, trigger: .read)))
        let second = scene.link.perform(.beginGATTPhase(connection: handle, .write), on: 0)
        #expect(scene.link.central.result(second) == .failure(.refused(state: reading, trigger: .write)))
        #expect(EngineGATTPhaseTests.attOpcodes(scene.link).count == before, "nothing of the refused read was sent")

        // The engine's MTU exchange fires no trigger, so it ends no phase.
        guard case .success(.mtu)? = try Self.engine(&scene, .exchangeMTU) else {
            Issue.record("the MTU exchange failed")
            return
        }
        #expect(scene.link.central.engine.state(of: Self.peer) == reading, "the application's phase is still open")
        #expect(try Self.engine(&scene, .attRequest(.readRequest(handle: value))) == .success(.attResponse(.readResponse(value: [0x11]))))
        let end = scene.link.perform(.endGATTPhase(connection: handle, failure: nil), on: 0)
        #expect(scene.link.central.result(end) == .success(.done))
        let again = scene.link.perform(.endGATTPhase(connection: handle, failure: nil), on: 0)
        #expect(scene.link.central.result(again) == .failure(.refused(state: .connected(.discoveredCharacteristic), trigger: .operationCompleted)))
        #expect(EngineGATTPhaseTests.transitions(scene.link.central.takeEvents()) == ConnectedTransitions.path(from: .connected(.idle), [
            (.discoverCharacteristics, .connected(.discoveringCharacteristics)),
            (.operationCompleted, .connected(.discoveredCharacteristic)),
            (.read, reading),
            (.operationCompleted, .connected(.discoveredCharacteristic)),
        ]))
    }

    @Test("an application phase is refused while an engine procedure is in its phase; the procedure ends its own phase")
    func applicationPhaseWhileEngineProcedureRuns() throws {
        var scene = try EngineGATTPhaseTests.scene()
        let handle = scene.handle
        #expect(try Self.engine(&scene, .cachedDiscovery) == .success(.done))
        _ = scene.link.central.takeEvents()
        let write = scene.link.perform(.gatt(connection: handle, .write(handle: scene.readable.valueHandle, value: [0x55])), on: 0)
        let writing = ConnectionState.connected(.writingCharacteristic(notificationsEnabled: false))
        #expect(scene.link.central.engine.state(of: Self.peer) == writing, "the engine's write is in its phase")
        let begin = scene.link.perform(.beginGATTPhase(connection: handle, .read), on: 0)
        #expect(scene.link.central.result(begin) == .failure(.refused(state: writing, trigger: .read)))
        // Ending is the owner's: the engine's phase is not the application's to end.
        let end = scene.link.perform(.endGATTPhase(connection: handle, failure: nil), on: 0)
        #expect(scene.link.central.result(end) == .failure(.refused(state: writing, trigger: .operationCompleted)))
        try scene.link.run(until: { $0.central.result(write) != nil }, within: .seconds(5))
        #expect(scene.link.central.result(write) == .success(.done))
        #expect(EngineGATTPhaseTests.transitions(scene.link.central.takeEvents()) == ConnectedTransitions.path(from: .connected(.discoveredCharacteristic), [
            (.write, writing), (.operationCompleted, .connected(.discoveredCharacteristic)),
        ]))
    }

    @Test("a transaction timeout of the application's request ends its phase with Failure once; the end then fires nothing")
    func transactionTimeoutEndsThePhase() throws {
        var scene = try EngineGATTPhaseTests.scene()
        let handle = scene.handle
        #expect(try Self.engine(&scene, .cachedDiscovery) == .success(.done))
        _ = scene.link.central.takeEvents()
        scene.link.peripheral.controller.faults.isUnresponsive = true
        let begin = scene.link.perform(.beginGATTPhase(connection: handle, .read), on: 0)
        #expect(scene.link.central.result(begin) == .success(.done))
        let read = scene.link.perform(.gatt(connection: handle, .attRequest(.readRequest(handle: scene.readable.valueHandle))), on: 0)
        try scene.link.run(until: { $0.central.result(read) != nil }, within: .seconds(40))
        #expect(scene.link.central.result(read) == .failure(.att(.transactionTimeout)))
        let end = scene.link.perform(.endGATTPhase(connection: handle, failure: .att(.transactionTimeout)), on: 0)
        #expect(scene.link.central.result(end) == .success(.done))
        #expect(EngineGATTPhaseTests.transitions(scene.link.central.takeEvents()) == [
            "Connected.DiscoveredCharacteristic --Read--> Connected.ReadingCharacteristic",
            "Connected.ReadingCharacteristic --Failure--> Error",
        ])
        #expect(scene.link.central.engine.failure(of: Self.peer) == .att(.transactionTimeout))
    }

    @Test("ending with a failure fires Failure with that cause; after a disconnection the end fails with unknownConnection")
    func failureAndDisconnection() throws {
        var scene = try EngineGATTPhaseTests.scene()
        let handle = scene.handle
        #expect(try Self.engine(&scene, .cachedDiscovery) == .success(.done))
        let begin = scene.link.perform(.beginGATTPhase(connection: handle, .write), on: 0)
        #expect(scene.link.central.result(begin) == .success(.done))
        let end = scene.link.perform(.endGATTPhase(connection: handle, failure: .att(.closed)), on: 0)
        #expect(scene.link.central.result(end) == .success(.done))
        #expect(scene.link.central.engine.state(of: Self.peer) == .error)
        #expect(scene.link.central.engine.failure(of: Self.peer) == .att(.closed))

        // A second link, a phase open when it drops: its Disconnect ends the phase.
        var other = try EngineGATTPhaseTests.scene()
        #expect(try Self.engine(&other, .cachedDiscovery) == .success(.done))
        _ = other.link.central.takeEvents()
        other.link.perform(.beginGATTPhase(connection: other.handle, .discoverServices), on: 0)
        let disconnect = other.link.perform(.disconnect(handle: other.handle, reason: .remoteUserTerminatedConnection), on: 0)
        try other.link.run(until: { $0.central.result(disconnect) != nil }, within: .seconds(2))
        let late = other.link.perform(.endGATTPhase(connection: other.handle, failure: nil), on: 0)
        #expect(other.link.central.result(late) == .failure(.unknownConnection(other.handle)))
        #expect(EngineGATTPhaseTests.transitions(other.link.central.takeEvents()) == [
            "Connected.DiscoveredCharacteristic --DiscoverServices--> Connected.DiscoveringServices",
            "Connected.DiscoveringServices --Disconnect--> Disconnected.Initial",
        ])
    }
}
