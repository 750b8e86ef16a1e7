import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireTesting
import Testing

/// One run of the central/peripheral interop scenario between two Bluewire hosts on a virtual link:
/// what the central did and saw, and what the peripheral reported meanwhile.
struct ScenarioRun: Sendable {
    static let notificationCount = 40
    static let indicationCount = 8
    static let requestValue = (0..<100).map { UInt8(truncatingIfNeeded: 200 &- $0) }
    static let commandValue = Array("written without response".utf8)
    /// What each host offers in the MTU exchange: the central more than the peripheral.
    static let centralMTU: UInt16 = 517
    static let peripheralMTU: UInt16 = 247

    var fixture: ScenarioDatabase
    var device: DiscoveredDevice
    var centralAddress: BluetoothAddress
    var peripheralAddress: BluetoothAddress
    var centralHandle: UInt16
    var mtu: Int
    var dump: GATTDump
    var longRead: [UInt8]
    var readBack: [UInt8]
    var serverValueAfterWrites: [UInt8]?
    var notified: [[UInt16]]
    var notifications: [GATTNotification]
    var indicationOutcomes: [IndicationOutcome]
    var indications: [GATTNotification]
    var peripheralEvents: [PeripheralEvent]
    var peripheralHandle: UInt16
    var serverStateAtEnd: PeripheralConnectionState?
    var violations: [VirtualController.HostViolation]
    var virtualTime: MonotonicInstant

    /// The value of the `index`th notification or indication: sequence number first, then filler up
    /// to ATT_MTU − 3, so that a value lost, repeated or cut shows.
    static func value(_ index: Int, mtu: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: index), UInt8(truncatingIfNeeded: index >> 8)] + (2..<(mtu - 3)).map { UInt8(truncatingIfNeeded: $0 &+ index) }
    }

    /// Runs the scenario: scan, connect, MTU exchange, dump, long read, writes with and without
    /// response, notifications, indications, unsubscriptions, disconnection.
    static func run(radio: Bool) async throws -> ScenarioRun {
        try await withScene(hosts: 2, radio: radio, mtus: [centralMTU, peripheralMTU]) { scene in
            let central = scene.hosts[0], peripheral = scene.hosts[1]
            let fixture = try ScenarioDatabase()
            await peripheral.setDatabase(fixture.database)
            let events = Transcript(await peripheral.peripheralEvents())
            try await peripheral.startAdvertising(try fixture.advertisement)

            let device = try await scene.find(ScenarioDatabase.name, from: central) {
                !$0.manufacturerData.isEmpty && $0.serviceUUIDs.contains(ScenarioDatabase.service)
            }
            let connection = try await central.connect(to: device.address)
            let gatt = await connection.gatt
            let mtu = try await gatt.exchangeMTU()
            let dump = try await gatt.dump()
            let characteristics = dump.services.flatMap(\.characteristics).map(\.characteristic)
            func characteristic(_ handle: UInt16) throws -> GATTCharacteristic {
                try #require(characteristics.first { $0.valueHandle == handle }, "characteristic 0x\(hex(handle, width: 4)) not discovered")
            }
            let longRead = try await gatt.read(try characteristic(fixture.long))

            try await gatt.write(requestValue, to: try characteristic(fixture.writable))
            try await gatt.writeWithoutResponse(commandValue, to: fixture.writable)
            // ATT keeps order on the bearer: the server has handled the command before this read.
            let readBack = try await gatt.read(handle: fixture.writable)
            let serverValue = await peripheral.database[handle: fixture.writable]?.cachedValue

            let peripheralHandle = try #require(await peripheral.connections.first?.handle)
            let subscription = try await gatt.subscribe(to: try characteristic(fixture.notifying))
            var notified: [[UInt16]] = []
            for index in 0..<notificationCount {
                notified.append(try await peripheral.notify(fixture.notifying, value: value(index, mtu: mtu)))
            }
            var notifications: [GATTNotification] = []
            var iterator = subscription.makeAsyncIterator()
            while notifications.count < notificationCount, let next = try await iterator.next() { notifications.append(next) }

            let indicationSubscription = try await gatt.subscribe(to: try characteristic(fixture.indicating), indications: true)
            var outcomes: [IndicationOutcome] = []
            for index in 0..<indicationCount {
                outcomes.append(try await peripheral.indicate(fixture.indicating, value: value(index, mtu: mtu)))
            }
            var indications: [GATTNotification] = []
            var indicationIterator = indicationSubscription.makeAsyncIterator()
            while indications.count < indicationCount, let next = try await indicationIterator.next() { indications.append(next) }

            try await gatt.unsubscribe(subscription)
            try await gatt.unsubscribe(indicationSubscription)
            // Reads the dynamic value once more: its handler sees the offsets of this read too.
            _ = try await gatt.readLong(handle: fixture.dynamic)
            let serverState = await peripheral.serverState(for: peripheralHandle)
            try await connection.disconnect()
            await events.wait(for: 1) { if case .disconnected = $0 { true } else { false } }

            return ScenarioRun(
                fixture: fixture, device: device, centralAddress: scene.addresses[0], peripheralAddress: scene.addresses[1],
                centralHandle: connection.handle, mtu: mtu, dump: dump, longRead: longRead, readBack: readBack,
                serverValueAfterWrites: serverValue, notified: notified, notifications: notifications,
                indicationOutcomes: outcomes, indications: indications, peripheralEvents: events.elements,
                peripheralHandle: peripheralHandle, serverStateAtEnd: serverState, violations: scene.violations,
                virtualTime: scene.clock.monotonicNow)
        }
    }
}

/// Each timing's scenario runs once; the tests of both sides assert on that run.
actor ScenarioRuns {
    static let shared = ScenarioRuns()
    private var runs: [Bool: Task<ScenarioRun, any Error>] = [:]

    func run(radio: Bool) async throws -> ScenarioRun {
        if let running = runs[radio] { return try await running.value }
        let running = Task { try await ScenarioRun.run(radio: radio) }
        runs[radio] = running
        return try await running.value
    }
}

/// The central interop scenario (what bumble's peripheral tests prove against a Bluewire central),
/// with both sides Bluewire hosts on a virtual link, without and with radio timing.
@Suite("VirtualLink scenario: the central's view")
struct VirtualLinkScenarioCentralTests {
    @Test("the scan finds the peripheral's name, service UUID and manufacturer data", .timeLimit(.minutes(2)), arguments: [false, true])
    func scanFindsPeripheral(radio: Bool) async throws {
        let run = try await ScenarioRuns.shared.run(radio: radio)
        #expect(run.device.address == run.peripheralAddress)
        #expect(run.device.name == ScenarioDatabase.name)
        #expect(run.device.serviceUUIDs == [ScenarioDatabase.service])
        #expect(run.device.manufacturerData.map(\.companyIdentifier) == [ScenarioDatabase.manufacturer.company])
        #expect(run.device.manufacturerData.map(\.data) == [ScenarioDatabase.manufacturer.data])
        #expect(run.device.connectable)
        #expect(run.violations.isEmpty, "\(run.violations)")
        if radio {
            #expect(run.virtualTime > .zero, "radio timing: advertising and connection events take virtual time")
        } else {
            #expect(run.virtualTime == .zero, "immediate timing: nothing needed virtual time")
        }
    }

    @Test("the GATT dump equals the peripheral's database, handle for handle", .timeLimit(.minutes(2)), arguments: [false, true])
    func dumpEqualsDatabase(radio: Bool) async throws {
        let run = try await ScenarioRuns.shared.run(radio: radio)
        let dumped = run.dump.attributes
        let served = run.fixture.database.attributes
        #expect(dumped.map(\.handle) == served.map(\.handle), "handles")
        #expect(dumped.map(\.type) == served.map(\.type), "attribute types")
        for attribute in served {
            let entry = dumped.first { $0.handle == attribute.handle }
            #expect(entry?.value == run.fixture.expectedValue(attribute.handle),
                    "value of 0x\(hex(attribute.handle, width: 4)) (\(attribute.type))")
        }
        #expect(run.dump.readErrors.isEmpty, "\(run.dump.readErrors)")
    }

    @Test("a value longer than two Read Responses arrives whole (Read, then Read Blob)", .timeLimit(.minutes(2)), arguments: [false, true])
    func longValueByReadBlob(radio: Bool) async throws {
        let run = try await ScenarioRuns.shared.run(radio: radio)
        #expect(ScenarioDatabase.longValue.count >= 300)
        #expect(run.longRead == ScenarioDatabase.longValue)
        #expect(run.dump.values[run.fixture.dynamic] == ScenarioDatabase.dynamicValue)
    }

    @Test("a write with response and a write without response both reach the server, in order", .timeLimit(.minutes(2)), arguments: [false, true])
    func writesArrive(radio: Bool) async throws {
        let run = try await ScenarioRuns.shared.run(radio: radio)
        #expect(run.serverValueAfterWrites == ScenarioRun.commandValue, "the server holds the last write")
        #expect(run.readBack == ScenarioRun.commandValue, "reading back returns the last write")
    }

    @Test("the MTU is exchanged (the smaller offer wins) and used: values of ATT_MTU - 3 octets arrive whole",
          .timeLimit(.minutes(2)), arguments: [false, true])
    func mtuExchangedAndUsed(radio: Bool) async throws {
        let run = try await ScenarioRuns.shared.run(radio: radio)
        #expect(run.mtu == Int(ScenarioRun.peripheralMTU))
        #expect(run.notifications.allSatisfy { $0.value.count == run.mtu - 3 }, "\(run.notifications.map(\.value.count))")
    }

    @Test("notifications and indications arrive in order, none lost", .timeLimit(.minutes(2)), arguments: [false, true])
    func notificationsAndIndicationsInOrder(radio: Bool) async throws {
        let run = try await ScenarioRuns.shared.run(radio: radio)
        #expect(run.notified.allSatisfy { $0 == [run.peripheralHandle] }, "each notification went to the one subscriber")
        #expect(run.notifications.map { Array($0.value) } == (0..<ScenarioRun.notificationCount).map { ScenarioRun.value($0, mtu: run.mtu) })
        #expect(run.notifications.allSatisfy { $0.handle == run.fixture.notifying && !$0.isIndication })
        #expect(run.indications.map { Array($0.value) } == (0..<ScenarioRun.indicationCount).map { ScenarioRun.value($0, mtu: run.mtu) })
        #expect(run.indications.allSatisfy { $0.handle == run.fixture.indicating && $0.isIndication })
        #expect(run.indicationOutcomes.allSatisfy { $0.confirmed == [run.peripheralHandle] && $0.failed.isEmpty })
    }
}
