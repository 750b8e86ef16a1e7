import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import Synchronization
import Testing

/// Offsets a dynamic read handler was called with.
final class ReadOffsets: Sendable {
    private let offsets = Mutex<[Int]>([])
    func append(_ offset: Int) { offsets.withLock { $0.append(offset) } }
    var values: [Int] { offsets.withLock { $0 } }
}

/// A database with one of everything a central meets: a long value (read with Read Blob), a
/// writable value, notify and indicate characteristics, and a dynamic value.
struct ServerFixture {
    static let service = BluetoothUUID(parsing: "6e400001-b5a3-f393-e0a9-e50e24dcca9e")!
    static let longValue = (0..<120).map { UInt8(truncatingIfNeeded: $0 * 7 + 1) }
    static let dynamicValue = Array("dynamic value: computed on each read, longer than one PDU".utf8)

    var database: GATTDatabase
    var long: UInt16
    var writable: UInt16
    var notifying: UInt16
    var indicating: UInt16
    var dynamic: UInt16
    let dynamicReads = ReadOffsets()

    init() throws {
        var builder = GATTDatabaseBuilder()
        try builder.addService(.genericAccess)
        try builder.addCharacteristic(.deviceName, properties: [.read], permissions: [.read], value: .cached(Array("Bluewire".utf8)))
        try builder.addService(Self.service)
        long = try builder.addCharacteristic(BluetoothUUID(0xFF01), properties: [.read], permissions: [.read], value: .cached(Self.longValue)).valueHandle
        writable = try builder.addCharacteristic(BluetoothUUID(0xFF02), properties: [.read, .write], permissions: [.read, .write], value: .cached([0])).valueHandle
        notifying = try builder.addCharacteristic(BluetoothUUID(0xFF03), properties: [.read, .notify], permissions: [.read], value: .cached([1])).valueHandle
        indicating = try builder.addCharacteristic(BluetoothUUID(0xFF04), properties: [.indicate], permissions: [], value: .cached([])).valueHandle
        let reads = dynamicReads
        dynamic = try builder.addCharacteristic(
            BluetoothUUID(0xFF05), properties: [.read], permissions: [.read],
            value: .dynamic(GATTDynamicValue(read: { request throws(GATTAttributeError) in
                reads.append(request.offset)
                return try request.part(of: ServerFixture.dynamicValue)
            }))).valueHandle
        database = builder.build()
    }

    /// What a read of the characteristic at `handle` returns in full.
    func expectedValue(_ handle: UInt16) -> [UInt8]? {
        handle == dynamic ? Self.dynamicValue : database[handle: handle]?.cachedValue
    }
}

func isRead(of handle: UInt16) -> @Sendable (PeripheralEvent) -> Bool {
    { if case .read(let read) = $0 { read.handle == handle } else { false } }
}

/// The Host as a GATT server (peripheral role) against bumble's GATT client as central: bumble
/// discovers and reads the whole database, writes, subscribes, and receives notifications and
/// indications. A fresh bumble link per test (Docs/Testing.md).
@Suite("Peripheral: GATT server against bumble centrals")
struct PeripheralServerInteropTests {
    @Test func bumbleCentralDiscoversAndReadsWholeDatabaseIncludingLongValuesByReadBlob() async throws {
        let fixture = try ServerFixture()
        try await withPeripheralLink { peer, host, peerLog, hostLog in
            await host.setDatabase(fixture.database)
            let plan = try await host.startAdvertising(Advertisement(name: "Bluewire", services: [ServerFixture.service]))
            #expect(plan.kind == .legacy, "bumble's supported-commands bitmap lacks extended advertising")
            try await peerLog.first("bumble's discovery to finish") { $0.isCentral(0, "discovered") }
            let entries = await peerLog.events.filter { $0.isCentral(0, "characteristic") }
            for characteristic in await host.database.characteristics {
                let entry = entries.first { $0["handle"]?.int == Int(characteristic.valueHandle) }
                #expect(entry != nil, "bumble did not discover the characteristic at 0x\(hex(characteristic.valueHandle, width: 4))")
                guard characteristic.properties.contains(.read) else { continue }
                #expect(entry?["value"]?.string == fixture.expectedValue(characteristic.valueHandle).map(hexBytes),
                        "value bumble read at 0x\(hex(characteristic.valueHandle, width: 4))")
            }
            // Without an MTU exchange a Read returns 22 octets; bumble reads on with Read Blob at 22, 44...
            let longReads = try await hostLog.wait(for: 6, "Read Blob of the long value", where: isRead(of: fixture.long))
            let offsets = longReads.compactMap { if case .read(let read) = $0 { read.offset } else { nil } }
            #expect(offsets == Array(stride(from: 0, through: 110, by: 22)))
            #expect(fixture.dynamicReads.values == [0, 22, 44], "the dynamic handler is called once per read, with its offset")
        }
    }

    @Test func writesSubscriptionsNotificationsAndIndicationsWorkWithBumble() async throws {
        let fixture = try ServerFixture()
        try await withPeripheralLink { peer, host, peerLog, hostLog in
            await host.setDatabase(fixture.database)
            try await host.startAdvertising(Advertisement(name: "Bluewire", services: [ServerFixture.service]))
            try await peerLog.first("bumble's discovery to finish") { $0.isCentral(0, "discovered") }
            let connection = try #require(await host.connections.first).handle
            let subscriptions = try await hostLog.wait(for: 2, "both subscriptions") {
                if case .subscriptionChanged = $0 { true } else { false }
            }
            #expect(Set(subscriptions) == [
                .subscriptionChanged(GATTSubscription(connection: connection, valueHandle: fixture.notifying, configuration: 1)),
                .subscriptionChanged(GATTSubscription(connection: connection, valueHandle: fixture.indicating, configuration: 2)),
            ])

            peer.command(0, "write", ["handle": Int(fixture.writable), "value": "2a"])
            let written = try await peerLog.first("the write response") { $0.isCentral(0, "written") }
            #expect(written["error"] == nil, "write refused: \(written)")
            try await hostLog.first("the write event") {
                $0 == .write(PeripheralWrite(connection: connection, handle: fixture.writable, value: [0x2A], offset: 0, kind: nil))
            }
            peer.command(0, "read", ["handle": Int(fixture.writable)])
            let readBack = try await peerLog.first("the read back") { $0.isCentral(0, "read") }
            #expect(readBack["value"]?.string == "2a")

            #expect(try await host.notify(fixture.notifying, value: [9, 8, 7]) == [connection])
            let notification = try await peerLog.first("the notification") { $0.isCentral(0, "notification", Int(fixture.notifying)) }
            #expect(notification["value"]?.string == "090807")

            // Three at once: one goes out, two wait in the server's queue for the confirmations.
            async let first = host.indicate(fixture.indicating, value: [1])
            async let second = host.indicate(fixture.indicating, value: [2])
            async let third = host.indicate(fixture.indicating, value: [3])
            let outcomes = try await [first, second, third]
            #expect(outcomes.allSatisfy { $0.confirmed == [connection] && $0.failed.isEmpty }, "\(outcomes)")
            let indications = try await peerLog.wait(for: 3, "three indications") { $0.isCentral(0, "notification", Int(fixture.indicating)) }
            #expect(Set(indications.compactMap { $0["value"]?.string }) == ["01", "02", "03"])
            #expect(indications.allSatisfy { $0["kind"]?.string == "indicate" })
            let state = try #require(await host.serverState(for: connection))
            #expect(state.queuedIndications == 0 && !state.indicationOutstanding && state.pendingIndicationCalls == 0)
        }
    }
}
