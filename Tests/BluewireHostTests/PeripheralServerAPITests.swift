import Bluewire
import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireTesting
import BluewireTransport
import Foundation
import Glibc
import HostTestSupport
import Synchronization
import Testing

/// Calls of a dynamic value's handlers.
final class HandlerLog: Sendable {
    private let reads = Mutex<[Int]>([])
    func read(_ offset: Int) { reads.withLock { $0.append(offset) } }
    var readOffsets: [Int] { reads.withLock { $0 } }
}

/// The Host's GATT server API (database, dynamic values, notify/indicate, events), driven by a
/// Bluewire central on a virtual link.
@Suite("Peripheral: the Host's server API")
struct PeripheralServerAPITests {
    static let service = BluetoothUUID(0xFFF0)
    static let dynamicValue = (0..<60).map { UInt8($0) }

    struct Served {
        var database: GATTDatabase
        var dynamic: UInt16
        var readOnly: UInt16
        var notifying: UInt16
        var indicating: UInt16
        let log = HandlerLog()

        init() throws {
            var builder = GATTDatabaseBuilder()
            try builder.addService(PeripheralServerAPITests.service)
            let log = self.log
            dynamic = try builder.addCharacteristic(
                BluetoothUUID(0xFFF1), properties: [.read, .write, .writeWithoutResponse], permissions: [.read, .write],
                value: .dynamic(GATTDynamicValue(
                    read: { request throws(GATTAttributeError) in
                        log.read(request.offset)
                        return try request.part(of: PeripheralServerAPITests.dynamicValue)
                    },
                    write: { request throws(GATTAttributeError) in
                        if request.value == [0xFF] { throw GATTAttributeError(ATTErrorCode(0x80)) }
                    }))).valueHandle
            readOnly = try builder.addCharacteristic(BluetoothUUID(0xFFF2), properties: [.read], permissions: [.read], value: .cached([1])).valueHandle
            notifying = try builder.addCharacteristic(BluetoothUUID(0xFFF3), properties: [.notify], permissions: [], value: .cached([])).valueHandle
            indicating = try builder.addCharacteristic(BluetoothUUID(0xFFF4), properties: [.indicate], permissions: [], value: .cached([])).valueHandle
            database = builder.build()
        }
    }

    /// A peripheral serving `served`, a central connected to it, and the central's discovered characteristics.
    static func connected(_ served: Served) async throws -> (PeripheralVirtualLinkTests.Fixture, PeripheralEventRecorder, GATTClient, [GATTCharacteristic]) {
        let fixture = try await PeripheralVirtualLinkTests.Fixture(hosts: 2)
        let peripheral = fixture.hosts[0]
        let events = PeripheralEventRecorder(await peripheral.peripheralEvents())
        await peripheral.setDatabase(served.database)
        try await peripheral.startAdvertising(try Advertisement(name: "API", services: [service]))
        let connection = try await fixture.hosts[1].connect(to: PeripheralVirtualLinkTests.Fixture.address(0))
        let gatt = await connection.gatt
        let discovered = try #require(try await gatt.discoverServices(uuid: service).first)
        return (fixture, events, gatt, try await gatt.discoverCharacteristics(of: discovered))
    }

    @Test func dynamicHandlersSeeEachReadOffsetAndAcceptedWritesAreEventsWithTheirKind() async throws {
        let served = try Served()
        let (fixture, events, gatt, characteristics) = try await Self.connected(served)
        let dynamic = try #require(characteristics.first { $0.valueHandle == served.dynamic })
        #expect(try await gatt.read(dynamic) == Self.dynamicValue)
        #expect(served.log.readOffsets == [0, 22, 44], "one handler call per Read / Read Blob, at MTU 23")
        try await events.wait(for: 3, "three reads") { if case .read = $0 { true } else { false } }

        try await gatt.write([1, 2], to: dynamic)
        try await gatt.writeWithoutResponse([3], to: served.dynamic)
        try await gatt.writeLong(Array(repeating: 7, count: 40), to: served.dynamic)
        await #expect(throws: GATTError.self, "the handler's application error reaches the central") {
            try await gatt.write([0xFF], to: dynamic)
        }
        try await events.wait(for: 3, "three accepted writes") { if case .write = $0 { true } else { false } }
        let connection = try #require(await fixture.hosts[0].connections.first).handle
        let writes = await events.events.compactMap { event -> PeripheralWrite? in if case .write(let write) = event { write } else { nil } }
        #expect(writes == [
            PeripheralWrite(connection: connection, handle: served.dynamic, value: [1, 2], offset: 0, kind: .request),
            PeripheralWrite(connection: connection, handle: served.dynamic, value: [3], offset: 0, kind: .command),
            PeripheralWrite(connection: connection, handle: served.dynamic, value: Array(repeating: 7, count: 40), offset: 0, kind: .executeWrite),
        ])
        // The refusal is an event like the others: waited for, not looked for at once (it may still
        // be on its way to the recorder when the central has the Error Response).
        let refused = PeripheralEvent.requestRefused(connection: connection, request: .writeRequest, handle: served.dynamic, error: ATTErrorCode(0x80))
        try await events.wait(for: 1, "the refused write") { $0 == refused }
        await fixture.close()
    }

    @Test func notifyAndIndicateNameWhatTheyCannotDoAndReachNobodyUnsubscribed() async throws {
        let served = try Served()
        let (fixture, _, gatt, characteristics) = try await Self.connected(served)
        let peripheral = fixture.hosts[0]
        await #expect(throws: PeripheralError.self) { try await peripheral.notify(served.readOnly, value: [1]) }
        do {
            _ = try await peripheral.notify(served.readOnly, value: [1])
        } catch {
            guard case .server(.notSupportedByCharacteristic(served.readOnly)) = error else { Issue.record("\(error)"); return }
        }
        do {
            _ = try await peripheral.indicate(0x0999, value: [1])
            Issue.record("indicate on no characteristic succeeded")
        } catch {
            guard case .server(.notCharacteristicValue(0x0999)) = error else { Issue.record("\(error)"); return }
        }
        #expect(try await peripheral.notify(served.notifying, value: [1]).isEmpty, "nobody subscribed yet")
        #expect(try await peripheral.indicate(served.indicating, value: [1]) == IndicationOutcome(), "returns at once")

        let notifying = try #require(characteristics.first { $0.valueHandle == served.notifying })
        let subscription = try await gatt.subscribe(to: notifying)
        let connection = try #require(await peripheral.connections.first).handle
        #expect(await peripheral.subscriptions(of: served.notifying) == [GATTSubscription(connection: connection, valueHandle: served.notifying, configuration: 1)])
        // Cut to ATT_MTU − 3 = 20 octets (Core Vol 3 Part G §4.10).
        #expect(try await peripheral.notify(served.notifying, value: Array(repeating: 9, count: 30)) == [connection])
        var iterator = subscription.makeAsyncIterator()
        #expect(try await iterator.next()?.value == Array(repeating: 9, count: 20)[...])

        // A new database: the handles may mean something else now, so subscriptions are gone.
        await peripheral.setDatabase(served.database)
        #expect(await peripheral.subscriptions(of: served.notifying).isEmpty)
        #expect(try await peripheral.notify(served.notifying, value: [1]).isEmpty)
        await fixture.close()
    }

    @Test func anIndicationWaitsForTheConfirmationAndClosingTheHostEndsEventsAndAdvertising() async throws {
        let served = try Served()
        let (fixture, _, gatt, characteristics) = try await Self.connected(served)
        let peripheral = fixture.hosts[0]
        let indicating = try #require(characteristics.first { $0.valueHandle == served.indicating })
        let indications = try await gatt.subscribe(to: indicating, indications: true)
        let connection = try #require(await peripheral.connections.first).handle
        #expect(try await peripheral.indicate(served.indicating, value: [1]) == IndicationOutcome(confirmed: [connection]))
        var iterator = indications.makeAsyncIterator()
        #expect(try await iterator.next()?.isIndication == true)

        let events = await peripheral.peripheralEvents()
        #expect(await peripheral.isAdvertising)
        await peripheral.close()
        let finished = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in events {}
                return true
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(10))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        #expect(finished, "the peripheral events end when the Host closes")
        #expect(await !peripheral.isAdvertising)
        #expect(await peripheral.serverState(for: connection) == nil)
        for host in fixture.hosts.dropFirst() { await host.close() }
    }

    @Test func loadDatabaseNamesTheFileAndThePositionOfTheMistake() async throws {
        let fixture = try await PeripheralVirtualLinkTests.Fixture(hosts: 1)
        let peripheral = fixture.hosts[0]
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("peripheral-\(UUID().uuidString.prefix(8)).json")
        defer { try? FileManager.default.removeItem(at: url) }
        try "{ \"services\": [ { \"uuid\": \"0x180f\", \"colour\": 1 } ] }".write(to: url, atomically: true, encoding: .utf8)
        do {
            try await peripheral.loadDatabase(jsonFile: url.path)
            Issue.record("a database with an unknown key loaded")
        } catch {
            guard case .databaseFile(url.path, let fileError) = error else { Issue.record("\(error)"); return }
            #expect(fileError.line == 1 && fileError.reason == .unknownKey("colour"))
        }
        do {
            try await peripheral.loadDatabase(jsonFile: url.path + ".missing")
            Issue.record("a missing file loaded")
        } catch {
            guard case .unreadableFile = error else { Issue.record("\(error)"); return }
        }
        try "{ \"services\": [ { \"uuid\": \"0x180f\", \"characteristics\": [ { \"uuid\": \"0x2a19\", \"properties\": [\"read\"], \"value\": \"64\" } ] } ] }"
            .write(to: url, atomically: true, encoding: .utf8)
        let loaded = try await peripheral.loadDatabase(jsonFile: url.path)
        #expect(await peripheral.database.attributes.count == loaded.attributes.count && loaded.attributes.count == 3)
        await fixture.close()
    }

    /// The file is read off the Host's executor: while the read waits on a FIFO that has no data yet
    /// (a stuck file system), the Host still answers. Read on the Host (as before), the Host is
    /// stuck in read(2) and this test hangs rather than fails: the isolated call below cannot run,
    /// so the data that ends the read is never written (checked by hand; the time limit did not end
    /// the run, which was killed after 5 minutes).
    @Test("loadDatabase reads the file off the Host's executor", .timeLimit(.minutes(1)))
    func loadDatabaseDoesNotBlockTheHost() async throws {
        let fixture = try await PeripheralVirtualLinkTests.Fixture(hosts: 1)
        let peripheral = fixture.hosts[0]
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("database-\(UUID().uuidString.prefix(8)).fifo").path
        #expect(mkfifo(path, 0o600) == 0)
        defer { unlink(path) }
        let loading = Task { try await peripheral.loadDatabase(jsonFile: path) }
        // Opening the write end returns once the loader has opened the read end: from then on the
        // loader waits in read(2) for data.
        let writer = try await DedicatedThread.run { () -> Int32 in open(path, O_WRONLY | O_CLOEXEC) }.get()
        #expect(writer >= 0)
        #expect(await peripheral.database.attributes.isEmpty, "the Host answers while the read waits")
        let json = Array("{ \"services\": [ { \"uuid\": \"0x180f\", \"characteristics\": [ { \"uuid\": \"0x2a19\", \"properties\": [\"read\"], \"value\": \"64\" } ] } ] }".utf8)
        #expect(json.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) } == json.count)
        close(writer)
        let loaded = try await loading.value
        #expect(loaded.attributes.count == 3)
        #expect(await peripheral.database.attributes.count == 3)
        await fixture.close()
    }
}
