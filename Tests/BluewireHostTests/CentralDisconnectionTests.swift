@_spi(Testing) import Bluewire
import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireTesting
import Testing

/// The peer drops the link in the middle of each GATT procedure: the procedure and every operation
/// queued behind it fail with the disconnection reason, nothing hangs, and the state machine ends in
/// Disconnected.Initial.
@Suite("Central disconnection mid-procedure", .timeLimit(.minutes(1)))
struct CentralDisconnectionTests {
    /// A GATT procedure, the PDU the peer holds (unanswered) while the test queues more work, and
    /// what to discover first so the procedure is allowed to run.
    struct Procedure: Sendable, CustomTestStringConvertible {
        var name: String
        var heldPDU: ATTOpcode
        var occurrence: Int
        var run: @Sendable (GATTClient, CentralTestDatabase) async throws -> Void
        var testDescription: String { name }
    }

    static let procedures: [Procedure] = [
        Procedure(name: "discovery", heldPDU: .readByTypeRequest, occurrence: 2) { gatt, _ in
            _ = try await gatt.discoverAll()
        },
        Procedure(name: "long read", heldPDU: .readBlobRequest, occurrence: 2) { gatt, fixture in
            try await gatt.discoverThenRun(fixture) { gatt in _ = try await gatt.readLong(handle: fixture.long.valueHandle) }
        },
        Procedure(name: "long write", heldPDU: .prepareWriteRequest, occurrence: 2) { gatt, fixture in
            try await gatt.discoverThenRun(fixture) { gatt in
                try await gatt.writeLong([UInt8](repeating: 0x5A, count: 120), to: fixture.long.valueHandle)
            }
        },
        Procedure(name: "subscription", heldPDU: .writeRequest, occurrence: 1) { gatt, fixture in
            try await gatt.discoverThenRun(fixture) { gatt in
                let counter = try #require(gatt.cache.characteristic(uuid: BluetoothUUID(0xFFE1)))
                _ = try await gatt.subscribe(to: counter)
            }
        },
    ]

    @Test("the procedure and the operations queued behind it fail with the disconnection reason", arguments: procedures)
    func peerDisconnectsMidProcedure(_ procedure: Procedure) async throws {
        let bench = try await CentralTestBench.make()
        let gatt = bench.gatt, fixture = bench.fixture
        let transitions = gatt.transitions()
        bench.peripheral.inject(.silence, onPDU: procedure.heldPDU, occurrence: procedure.occurrence)
        var faults = bench.peripheral.faultsApplied.makeAsyncIterator()

        let first = Task { () async throws in try await procedure.run(gatt, fixture) }
        #expect(await faults.next() == procedure.heldPDU, "the peer holds the procedure's request")
        let queuedRead = Task { () async throws in _ = try await gatt.read(handle: fixture.deviceName.valueHandle) }
        let queuedWrite = Task { () async throws in try await gatt.write([1], to: fixture.control.valueHandle) }
        await gatt.queue.waitForQueued(count: 2)
        #expect(await gatt.queue.runningID != nil)

        bench.peripheral.disconnect(reason: .remoteUserTerminatedConnection)
        let expected = GATTError.disconnected(.remoteUserTerminatedConnection)
        for (name, task) in [("procedure", first), ("queued read", queuedRead), ("queued write", queuedWrite)] {
            let outcome = await task.result
            #expect(throws: expected, "\(name)") { try outcome.get() }
        }
        var seen: [ConnectionTransition] = []
        for await transition in transitions { seen.append(transition) }
        #expect(seen.last?.trigger == .disconnect)
        #expect(seen.last?.to == .initial)
        #expect(gatt.state == .initial)
        #expect(gatt.disconnectionReason == .remoteUserTerminatedConnection)
        await #expect(throws: expected, "an operation submitted afterwards fails at once with the same reason") {
            try await gatt.read(handle: fixture.deviceName.valueHandle)
        }
        await bench.host.close()
    }

    @Test("a subscription's sequence throws the disconnection reason when the link drops while notifications flow")
    func subscriptionEndsWithTheReason() async throws {
        let bench = try await CentralTestBench.make()
        try await bench.gatt.discoverThenRun(bench.fixture) { _ in }
        let counter = try #require(bench.gatt.cache.characteristic(uuid: BluetoothUUID(0xFFE1)))
        let subscription = try await bench.gatt.subscribe(to: counter)
        bench.peripheral.send(att: .handleValueNotification(handle: counter.valueHandle, value: [7]))
        bench.peripheral.disconnect(reason: .remoteDeviceTerminatedPowerOff)
        var iterator = subscription.makeAsyncIterator()
        #expect(try await iterator.next()?.value == [7], "what arrived before the drop is still delivered")
        await #expect(throws: GATTError.disconnected(.remoteDeviceTerminatedPowerOff)) { try await iterator.next() }
        await bench.host.close()
    }

    @Test("a local disconnect fails queued work with Connection Terminated by Local Host")
    func localDisconnect() async throws {
        let bench = try await CentralTestBench.make()
        try await bench.connection.disconnect()
        #expect(await bench.connection.isConnected == false)
        await #expect(throws: GATTError.disconnected(.connectionTerminatedByLocalHost)) {
            try await bench.gatt.discoverServices()
        }
        await bench.host.close()
    }

    @Test("an unanswered request times out after 30 s of host time: Failure puts the machine in Error and the link is dropped")
    func transactionTimeout() async throws {
        let clock = TestClock()
        let fixture = try CentralTestDatabase()
        let peripheral = CentralTestPeripheral(database: fixture.database)
        let host = BluetoothHost(transport: peripheral, clock: clock)
        try await host.start()
        let connection = try await host.connect(to: CentralTestPeripheral.peerAddress)
        let gatt = await connection.gatt
        try await gatt.discoverThenRun(fixture) { _ in }
        peripheral.inject(.silence, onPDU: .readRequest)
        var faults = peripheral.faultsApplied.makeAsyncIterator()
        let read = Task { () async throws in try await gatt.read(handle: fixture.deviceName.valueHandle) }
        _ = await faults.next()
        let events = await host.events()
        await clock.advance(by: .seconds(29))
        #expect(gatt.state == .connected(.readingCharacteristic(notificationsEnabled: false)))
        await clock.advance(by: .seconds(1))
        await #expect(throws: GATTError.bearer(.transactionTimeout)) { try await read.value }
        #expect(gatt.state == .error)
        // Core Vol 3 Part F §3.3.3: no more ATT on this bearer; the Host ends the link.
        for await event in events {
            guard case .disconnected(let handle, _, let reason) = event else { continue }
            #expect(handle == connection.handle && reason == .connectionTerminatedByLocalHost)
            break
        }
        #expect(gatt.disconnectionReason == .connectionTerminatedByLocalHost)
        #expect(gatt.state == .error, "Error is left only by Reset")
        await host.close()
    }

    @Test("after a transaction timeout the running read gets the bearer's error and the operations queued behind it the link's end, though the queue is failed the moment the link drops")
    func transactionTimeoutWithQueuedOperations() async throws {
        let clock = TestClock()
        let fixture = try CentralTestDatabase()
        let peripheral = CentralTestPeripheral(database: fixture.database)
        let host = BluetoothHost(transport: peripheral, clock: clock)
        try await host.start()
        let connection = try await host.connect(to: CentralTestPeripheral.peerAddress)
        let gatt = await connection.gatt
        try await gatt.discoverThenRun(fixture) { _ in }
        peripheral.inject(.silence, onPDU: .readRequest)
        var faults = peripheral.faultsApplied.makeAsyncIterator()
        let read = Task { () async throws in try await gatt.read(handle: fixture.deviceName.valueHandle) }
        _ = await faults.next()
        let queuedRead = Task { () async throws in try await gatt.read(handle: fixture.deviceName.valueHandle) }
        let queuedWrite = Task { () async throws in try await gatt.write([1], to: fixture.control.valueHandle) }
        await gatt.queue.waitForQueued(count: 2)
        await clock.advance(by: .seconds(30))
        await #expect(throws: GATTError.bearer(.transactionTimeout), "the read whose request timed out") { try await read.value }
        let expected = GATTError.disconnected(.connectionTerminatedByLocalHost)
        await #expect(throws: expected, "queued read: not sent on the closed bearer, not refused in Error") { try await queuedRead.value }
        await #expect(throws: expected, "queued write") { try await queuedWrite.value }
        #expect(gatt.disconnectionReason == .connectionTerminatedByLocalHost)
        #expect(await gatt.queue.runningID == nil)
        #expect(await gatt.queue.queuedIDs.isEmpty)
        await host.close()
    }

    @Test("an operation still running when the link drops after its transaction timeout is answered with the bearer's error, not the disconnection")
    func timedOutOperationStillRunningAtLinkDown() async throws {
        let clock = TestClock()
        let fixture = try CentralTestDatabase()
        let peripheral = CentralTestPeripheral(database: fixture.database)
        let host = BluetoothHost(transport: peripheral, clock: clock)
        try await host.start()
        let connection = try await host.connect(to: CentralTestPeripheral.peerAddress)
        let gatt = await connection.gatt
        try await gatt.discoverThenRun(fixture) { _ in }
        peripheral.inject(.silence, onPDU: .readRequest)
        var faults = peripheral.faultsApplied.makeAsyncIterator()
        let events = await host.events()
        // It returns only once the queue has been failed (the link dropped): its own result comes last.
        let read = Task { () async throws in try await gatt.run(ReturnsAfterLinkDown(handle: fixture.deviceName.valueHandle)) }
        _ = await faults.next()
        await clock.advance(by: .seconds(30))
        for await event in events {
            if case .disconnected = event { break }
        }
        await #expect(throws: GATTError.bearer(.transactionTimeout)) { try await read.value }
        #expect(gatt.disconnectionReason == .connectionTerminatedByLocalHost)
        await host.close()
    }

    @Test("a link's GATT queue runs on the host's executor: the host uses it synchronously")
    func queueSharesTheHostsExecutor() async throws {
        let bench = try await CentralTestBench.make()
        let gatt = bench.gatt
        bench.peripheral.inject(.silence, onPDU: .readByGroupTypeRequest)
        var faults = bench.peripheral.faultsApplied.makeAsyncIterator()
        let discovery = Task { () async throws in _ = try await gatt.discoverServices() }
        #expect(await faults.next() == .readByGroupTypeRequest)
        // `assumeIsolated` traps unless the queue's executor is the host's.
        let running = await Self.runningOperation(of: gatt.queue, on: bench.host)
        #expect(running != nil, "the discovery is running, seen from the host's executor without a hop")
        bench.peripheral.disconnect(reason: .remoteUserTerminatedConnection)
        await #expect(throws: GATTError.disconnected(.remoteUserTerminatedConnection)) { try await discovery.value }
        await bench.host.close()
    }

    @Test("an operation's body runs isolated to its queue, so on the host's executor, before and after its request")
    func operationBodiesRunOnTheHostsExecutor() async throws {
        let bench = try await CentralTestBench.make()
        let isolation = try await bench.gatt.run(RecordsIsolation(handle: bench.fixture.deviceName.valueHandle))
        // The queue runs on the host's executor (queueSharesTheHostsExecutor): a body isolated to the
        // queue needs no hop to reach the host.
        #expect(isolation.before === bench.gatt.queue, "the body started on \(String(describing: isolation.before))")
        #expect(isolation.after === bench.gatt.queue, "after its request the body went on on \(String(describing: isolation.after))")
        #expect(!isolation.value.isEmpty, "the read answered")
        await bench.host.close()
    }

    static func runningOperation(of queue: GATTOperationQueue, on host: isolated BluetoothHost) -> OperationID? {
        queue.assumeIsolated { $0.runningID }
    }
}

/// Sends one Read Request; when it fails, keeps the bearer until its task is cancelled (the queue's
/// `failAll` at link-down does that), then throws what the request threw.
private struct ReturnsAfterLinkDown: GATTOperation {
    let handle: UInt16

    func execute(on context: any ATTRequestPerformer) async throws(GATTError) -> [UInt8] {
        do throws(ConnectionError) {
            _ = try await context.request(.readRequest(handle: handle))
            return []
        } catch {
            // Until cancelled: the queue's failAll cancels the running operation's task.
            try? await Task.sleep(for: .seconds(3600))
            throw GATTError(error)
        }
    }
}

extension GATTClient {
    /// Discovers services and the characteristics and descriptors of the test service, then runs `body`.
    func discoverThenRun(_ fixture: CentralTestDatabase, _ body: (GATTClient) async throws -> Void) async throws {
        for service in try await discoverServices() where service.uuid == BluetoothUUID(0xFFE0) {
            for characteristic in try await discoverCharacteristics(of: service) {
                _ = try await discoverDescriptors(of: characteristic)
            }
        }
        try await body(self)
    }
}

extension GATTClientCache {
    func characteristic(uuid: BluetoothUUID) -> GATTCharacteristic? {
        characteristics(withUUID: uuid).first
    }
}

/// Reads one handle, noting the actor whose executor its body runs on before and after the request.
private struct RecordsIsolation: GATTOperation {
    let handle: UInt16

    nonisolated(nonsending) func execute(
        on context: any ATTRequestPerformer
    ) async throws(GATTError) -> (before: (any Actor)?, after: (any Actor)?, value: [UInt8]) {
        let before = #isolation
        let value = try await context.perform(ReadCharacteristicValue(handle: handle))
        return (before, #isolation, value)
    }
}
