@_spi(Testing) import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireTesting
import HostTestSupport
import Testing

/// The peripheral side of `BluetoothHost` names links by `Connection` values: `notify`, `indicate`,
/// `serverState(for:)`, the ACL queue and `streamSequencedNotifications` take one, and refuse one
/// whose link has ended, also once the controller has given its handle to a later link (Core Vol 4
/// Part E §7.7.65.1). On a virtual link, whose controller, like bumble's, gives a new link the lowest
/// free handle (bumble centrals: `PeripheralConnectionValueBumbleTests`).
@Suite("Peripheral: Connection values and stale links")
struct PeripheralConnectionValueTests {
    static let service = ConnectionValueDatabase.service
    typealias Served = ConnectionValueDatabase

    /// Connects `central` to the fixture's peripheral, subscribes to both characteristics and
    /// returns the central's subscriptions and the peripheral's `Connection` of the link.
    static func connect(
        _ central: BluetoothHost, events: PeripheralEventRecorder, connectedBefore: Int
    ) async throws -> (Bluewire.Connection, CharacteristicSubscription, CharacteristicSubscription, Bluewire.Connection) {
        let connection = try await central.connect(to: PeripheralVirtualLinkTests.Fixture.address(0))
        let gatt = await connection.gatt
        let found = try #require(try await gatt.discoverServices(uuid: Self.service).first)
        let characteristics = try await gatt.discoverCharacteristics(of: found)
        let notifications = try await gatt.subscribe(to: try #require(characteristics.first { $0.uuid == BluetoothUUID(0xFFC1) }))
        let indications = try await gatt.subscribe(to: try #require(characteristics.first { $0.uuid == BluetoothUUID(0xFFC2) }), indications: true)
        try await events.wait(for: connectedBefore + 1, "the central's connection") { if case .connected = $0 { true } else { false } }
        let connected = await events.events.compactMap { event -> Bluewire.Connection? in
            if case .connected(let connection) = event { connection } else { nil }
        }
        return (connection, notifications, indications, try #require(connected.last))
    }

    @Test("the Connection forms act on their link; once it ends, and after a later central's link got its handle, they are refused with StaleConnectionError")
    func staleConnectionIsRefusedAfterItsHandleIsReused() async throws {
        let fixture = try await PeripheralVirtualLinkTests.Fixture(hosts: 3)
        let peripheral = fixture.hosts[0]
        let served = try Served()
        let events = PeripheralEventRecorder(await peripheral.peripheralEvents())
        await peripheral.setDatabase(served.database)
        try await peripheral.startAdvertising(try Advertisement(name: "Stale", services: [Self.service]))

        let (first, firstNotifications, firstIndications, link) = try await Self.connect(fixture.hosts[1], events: events, connectedBefore: 0)
        #expect(link.peer == PeripheralVirtualLinkTests.Fixture.address(1) && link.role == .peripheral)
        #expect(await peripheral.connection(handle: link.handle) == link)
        #expect(try await peripheral.notify(served.notifying, value: [0x01], to: link))
        let outcome = try await peripheral.indicate(served.indicating, value: [0x02], to: link)
        #expect(outcome == IndicationOutcome(confirmed: [link.handle]))
        var notificationIterator = firstNotifications.makeAsyncIterator()
        #expect(try await notificationIterator.next()?.value == [0x01][...])
        var indicationIterator = firstIndications.makeAsyncIterator()
        #expect(try await indicationIterator.next()?.value == [0x02][...])
        let state = try await peripheral.serverState(for: link)
        #expect(state.subscriptions == 2 && state.pendingIndicationCalls == 0)
        #expect(try await peripheral.waitForACLQueue(of: link, atMost: 0))
        #expect(try await peripheral.queuedACLPackets(of: link) == 0)
        #expect(try await peripheral.streamSequencedNotifications(served.notifying, to: link, payloadLength: 8, limit: 3) == 3)
        for sequence in UInt32(0)..<3 {
            let value = try #require(try await notificationIterator.next()?.value)
            #expect(Array(value) == ThroughputProfile.packet(sequence: sequence, length: 8))
        }

        // The central ends the link: the Connection is refused, and says why.
        try await first.disconnect()
        try await events.wait(for: 1, "the disconnection") { if case .disconnected = $0 { true } else { false } }
        let disconnected = try #require(await events.events.first { if case .disconnected = $0 { true } else { false } })
        #expect(await peripheral.connection(of: disconnected) == link)
        #expect(await peripheral.connection(handle: link.handle) == nil)
        guard case .disconnected(_, _, let reason) = disconnected else { return }
        let ended = StaleConnectionError(connection: link, reason: .ended(reason))
        await #expect(throws: ended) { try await peripheral.serverState(for: link) }
        await #expect(throws: PeripheralError.self) { try await peripheral.notify(served.notifying, value: [0xEE], to: link) }

        // A second central connects and the controller gives its link the same handle.
        let (_, secondNotifications, _, newLink) = try await Self.connect(fixture.hosts[2], events: events, connectedBefore: 1)
        try #require(newLink.handle == link.handle, "the controller gives the lowest free handle")
        #expect(newLink != link && newLink.peer == PeripheralVirtualLinkTests.Fixture.address(2))
        let reused = StaleConnectionError(connection: link, reason: .handleReused(by: newLink.peer))
        do {
            try await peripheral.notify(served.notifying, value: [0xEE], to: link)
            Issue.record("notify sent to a stale Connection")
        } catch {
            guard case .staleConnection(let stale) = error else { throw error }
            #expect(stale == reused)
        }
        do {
            _ = try await peripheral.indicate(served.indicating, value: [0xEE], to: link)
            Issue.record("indicate sent to a stale Connection")
        } catch {
            guard case .staleConnection(let stale) = error else { throw error }
            #expect(stale == reused)
        }
        await #expect(throws: reused) { try await peripheral.serverState(for: link) }
        await #expect(throws: reused) { try await peripheral.waitForACLQueue(of: link, atMost: 0) }
        await #expect(throws: reused) { try await peripheral.queuedACLPackets(of: link) }
        await #expect(throws: reused) { try await peripheral.streamSequencedNotifications(served.notifying, to: link, limit: 1) }
        // Nothing refused reached the new central: its first notification is the one sent to it.
        #expect(try await peripheral.notify(served.notifying, value: [0x11], to: newLink))
        var secondIterator = secondNotifications.makeAsyncIterator()
        #expect(try await secondIterator.next()?.value == [0x11][...])
        #expect(try await peripheral.serverState(for: newLink).indicationOutstanding == false)
        // The bare handle is the low-level form: it names whichever link has the handle now.
        #expect(await peripheral.serverState(for: link.handle) != nil)

        // A Connection of another host is refused too.
        let central = fixture.hosts[2]
        let foreign = try #require(await central.connections.first)
        let other = StaleConnectionError(connection: foreign, reason: .otherHost)
        await #expect(throws: other) { try await peripheral.serverState(for: foreign) }
        await fixture.close()
    }

    @Test("a peripheral event's handle resolves to the live Connection it names")
    func eventsResolveToConnections() async throws {
        let fixture = try await PeripheralVirtualLinkTests.Fixture(hosts: 2)
        let peripheral = fixture.hosts[0]
        let served = try Served()
        let events = PeripheralEventRecorder(await peripheral.peripheralEvents())
        await peripheral.setDatabase(served.database)
        try await peripheral.startAdvertising(try Advertisement(name: "Events", services: [Self.service]))
        let (_, _, _, link) = try await Self.connect(fixture.hosts[1], events: events, connectedBefore: 0)
        try await events.wait(for: 2, "both subscriptions") { if case .subscriptionChanged = $0 { true } else { false } }
        for event in await events.events {
            switch event {
            case .advertisingStarted, .advertisingStopped:
                #expect(event.connectionHandle == nil)
                #expect(await peripheral.connection(of: event) == nil)
            default:
                #expect(event.connectionHandle == link.handle)
                #expect(await peripheral.connection(of: event) == link, "\(event)")
            }
        }
        await fixture.close()
    }
}
