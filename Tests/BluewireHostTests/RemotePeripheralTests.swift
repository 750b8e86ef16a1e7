import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireTesting
import HostTestSupport
import Synchronization
import Testing

typealias RemotePeripheralEventRecorder = EventRecorder<RemotePeripheralEvent>

extension RemotePeripheralEvent {
    var isConnected: Bool { if case .connected = self { true } else { false } }
    var isDisconnected: Bool { if case .disconnected = self { true } else { false } }
}

/// A value shared with the peripheral's GATT handlers.
final class Locked<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func withLock<R>(_ body: (inout Value) -> R) -> R { value.withLock { body(&$0) } }
}

/// Writes the access token once per link (the application authorizer the OTA example uses too).
final class TokenAuthorizer: OperationAuthorizer {
    /// Weakly: the peripheral's queue holds this authorizer (through its decorator), so a strong
    /// reference would be a cycle that keeps the peripheral, its queue and its worker alive for ever.
    weak let peripheral: RemotePeripheral?
    let token: [UInt8]
    let authorized = Mutex<(link: Int?, calls: Int, writes: Int)>((nil, 0, 0))

    init(peripheral: RemotePeripheral, token: [UInt8]) {
        self.peripheral = peripheral
        self.token = token
    }

    func authorize(for requirements: OperationRequirements) async throws(OperationError) {
        guard let link = peripheral?.link else { throw .notConnected }
        let done = authorized.withLock { state in
            state.calls += 1
            return state.link == link.number
        }
        if done { return }
        do throws(RemotePeripheralError) {
            let unlock = try await link.characteristic(RemotePeripheralTests.unlock)
            try await link.withGATT { [token] gatt throws(GATTError) in try await gatt.write(token, to: unlock) }
        } catch {
            throw OperationError(error)
        }
        authorized.withLock {
            $0.link = link.number
            $0.writes += 1
        }
    }
}

/// `RemotePeripheral` on a virtual link: a Bluewire central host and a Bluewire peripheral host whose
/// links really come and go (the peripheral disconnects, the central reconnects), in virtual time.
@Suite("RemotePeripheral: per-peer queue, auto-connect, auto-authorize on a virtual link")
struct RemotePeripheralTests {
    static let service = BluetoothUUID(0xFFF0)
    static let value = BluetoothUUID(0xFFF1)
    static let secret = BluetoothUUID(0xFFF2)
    static let unlock = BluetoothUUID(0xFFF3)
    static let token: [UInt8] = Array("open sesame".utf8)

    struct Fixture {
        let link = VirtualLink(timing: .immediate)
        let peripheralHost: BluetoothHost
        let centralHost: BluetoothHost
        let remote: RemotePeripheral
        let events: RemotePeripheralEventRecorder
        /// The connections (peripheral side) that wrote the token.
        let authorized = Locked<Set<UInt16>>([])

        init(configuration: RemotePeripheral.Configuration = .init()) async throws {
            var hosts: [BluetoothHost] = []
            for index in 0..<2 {
                let controller = link.addController(publicAddress: BluetoothAddress(value: 0x0000_0000_CC00 + UInt64(index)))
                let host = BluetoothHost(
                    transport: VirtualTransport(controller: controller),
                    configuration: HostConfiguration(randomAddress: .randomStatic(0x0000_0000_0C00 + UInt64(index))), clock: link.clock)
                try await host.start()
                hosts.append(host)
            }
            (peripheralHost, centralHost) = (hosts[0], hosts[1])
            remote = RemotePeripheral(host: centralHost, peer: .randomStatic(0x0000_0000_0C00), configuration: configuration)
            events = RemotePeripheralEventRecorder(await remote.events())
            await peripheralHost.setDatabase(try database())
            try await peripheralHost.startAdvertising(try Advertisement(name: "Remote"))
        }

        func database() throws -> GATTDatabase {
            let authorized = self.authorized
            var builder = GATTDatabaseBuilder()
            try builder.addService(RemotePeripheralTests.service)
            try builder.addCharacteristic(
                RemotePeripheralTests.value, properties: [.read], permissions: [.read],
                value: .dynamic(GATTDynamicValue(read: { request throws(GATTAttributeError) in
                    [0x42]
                })))
            try builder.addCharacteristic(
                RemotePeripheralTests.secret, properties: [.read, .write, .notify], permissions: [.read, .write],
                value: .dynamic(GATTDynamicValue(
                    read: { request throws(GATTAttributeError) in
                        guard authorized.withLock({ $0.contains(request.connection) }) else {
                            throw GATTAttributeError(.insufficientAuthorization)
                        }
                        return Array("secret".utf8)
                    },
                    write: { _ throws(GATTAttributeError) in })))
            try builder.addCharacteristic(
                RemotePeripheralTests.unlock, properties: [.write], permissions: [.write],
                value: .dynamic(GATTDynamicValue(write: { request throws(GATTAttributeError) in
                    guard request.value == RemotePeripheralTests.token else { throw GATTAttributeError(.valueNotAllowed) }
                    authorized.withLock { _ = $0.insert(request.connection) }
                })))
            return builder.build()
        }

        /// Drops the link from the peripheral's side (LL Terminate on the virtual link) and waits until
        /// the remote peripheral has heard of it.
        func dropLinkFromPeripheral() async throws {
            let before = await events.count { $0.isDisconnected }
            let connection = try #require(await peripheralHost.connections.first)
            try await connection.disconnect()
            // The peripheral forgets the authorization with the link (a new link may reuse the handle).
            authorized.withLock { $0.removeAll() }
            try await events.wait(for: before + 1, "the central to hear of the disconnection") { $0.isDisconnected }
        }

        func close() async {
            await peripheralHost.close()
            await centralHost.close()
        }
    }

    @Test func aQueuedReadConnectsOnDemandAndTheNextOneReconnectsAfterTheLinkDropped() async throws {
        let fixture = try await Fixture()
        let remote = fixture.remote
        await remote.attachAutoConnect()
        #expect(await !remote.isConnected)
        #expect(try await remote.read(Self.value) == [0x42])
        #expect(await remote.isConnected)
        try await fixture.dropLinkFromPeripheral()
        #expect(await !remote.isConnected)
        #expect(await remote.lastDisconnection == .remoteUserTerminatedConnection)

        #expect(try await remote.read(Self.value) == [0x42])
        #expect(await remote.connectionCount == 2)
        let connects = await fixture.events.events.compactMap { if case .connected(_, let count) = $0 { count } else { nil } }
        #expect(connects == [1, 2])
        await fixture.close()
    }

    /// Handles belong to a link: after a reconnection the characteristic is found again by UUID,
    /// here at another handle (the peripheral's database changed while no one was connected).
    @Test func characteristicsAreResolvedAgainOnEachLink() async throws {
        let fixture = try await Fixture()
        let remote = fixture.remote
        await remote.attachAutoConnect()
        #expect(try await remote.read(Self.value) == [0x42])
        let firstHandle = try #require(remote.link?.gatt.cache.characteristics.values.flatMap { $0 }.first { $0.uuid == Self.value })
        try await fixture.dropLinkFromPeripheral()

        var builder = GATTDatabaseBuilder()
        try builder.addService(BluetoothUUID(0xAAA0))
        try builder.addCharacteristic(BluetoothUUID(0xAAA1), properties: [.read], permissions: [.read], value: .cached([0x00]))
        try builder.addService(Self.service)
        try builder.addCharacteristic(Self.value, properties: [.read], permissions: [.read], value: .cached([0x43]))
        await fixture.peripheralHost.setDatabase(builder.build())

        #expect(try await remote.read(Self.value) == [0x43])
        let secondHandle = try #require(remote.link?.gatt.cache.characteristics.values.flatMap { $0 }.first { $0.uuid == Self.value })
        #expect(secondHandle.valueHandle != firstHandle.valueHandle, "the layout moved: \(firstHandle) then \(secondHandle)")
        await fixture.close()
    }

    @Test func theLinkIsReleasedAfterTheIdleTimeOnTheHostClockAndAReadBringsItBack() async throws {
        let fixture = try await Fixture()
        let remote = fixture.remote
        await remote.attachAutoConnect(idleDisconnect: .seconds(5))
        #expect(try await remote.read(Self.value) == [0x42])
        // The deadline was fixed on the virtual clock when the read ended.
        await fixture.link.clock.advance(by: .milliseconds(4_999))
        #expect(await remote.isConnected, "released before the idle time")
        #expect(await fixture.events.count { $0 == .idleDisconnect } == 0)
        await fixture.link.clock.advance(by: .milliseconds(1))
        try await fixture.events.wait("the idle disconnect") { $0 == .idleDisconnect }
        try await fixture.events.wait("the disconnection") { $0.isDisconnected }
        #expect(await !remote.isConnected)
        #expect(await fixture.peripheralHost.connections.isEmpty, "the peripheral saw the link end")

        #expect(try await remote.read(Self.value) == [0x42])
        #expect(await remote.connectionCount == 2)
        await fixture.close()
    }

    @Test func activityRestartsTheIdleTimer() async throws {
        let fixture = try await Fixture()
        let remote = fixture.remote
        await remote.attachAutoConnect(idleDisconnect: .seconds(5))
        _ = try await remote.read(Self.value)
        await fixture.link.clock.advance(by: .seconds(4))
        _ = try await remote.read(Self.value)
        await fixture.link.clock.advance(by: .seconds(4))
        #expect(await remote.isConnected, "the second read restarted the timer")
        await fixture.link.clock.advance(by: .seconds(1))
        try await fixture.events.wait("the idle disconnect") { $0 == .idleDisconnect }
        #expect(await remote.connectionCount == 1)
        await fixture.close()
    }

    @Test func withoutAutoConnectOperationsFailWithTypedErrors() async throws {
        let fixture = try await Fixture()
        let remote = fixture.remote
        await #expect(throws: RemotePeripheralError.notConnected) { try await remote.read(Self.value) }
        try await remote.connect()
        #expect(try await remote.read(Self.value) == [0x42])

        // One operation holds the queue; two wait behind it when the link drops.
        let gate = Gate()
        let holding = await remote.submit(remote.operation { link throws(RemotePeripheralError) in
            try await cancellable { try await gate.pass() }
            return try await link.readValue(Self.value)
        })
        await gate.arrived.wait()
        let queued = [await remote.submit(remote.readOperation(Self.value)), await remote.submit(remote.readOperation(Self.value))]
        try await fixture.dropLinkFromPeripheral()
        for operation in queued {
            await #expect(throws: RemotePeripheralError.disconnected(.remoteUserTerminatedConnection)) { try await operation.value }
        }
        await #expect(throws: RemotePeripheralError.disconnected(.remoteUserTerminatedConnection)) { try await holding.value }
        gate.open()
        await #expect(throws: RemotePeripheralError.notConnected) { try await remote.read(Self.value) }
        #expect(await remote.connectionCount == 1)
        await fixture.close()
    }

    @Test func withoutAutoConnectADisconnectAskedForSucceedsAndLaterOperationsAreNotConnected() async throws {
        let fixture = try await Fixture()
        let remote = fixture.remote
        try await remote.connect()
        let disconnect = await remote.submit(remote.disconnectOperation())
        let after = await remote.submit(remote.readOperation(Self.value))
        try await disconnect.value
        await #expect(throws: RemotePeripheralError.notConnected) { try await after.value }
        try await fixture.events.wait("the disconnection") { $0.isDisconnected }
        #expect(await remote.lastDisconnection == .connectionTerminatedByLocalHost)
        try await remote.connect()
        #expect(try await remote.read(Self.value) == [0x42])
        await fixture.close()
    }

    @Test func anOperationTheLinkDroppedUnderResumesOnANewLinkAndItsSubscriptionComesBack() async throws {
        let fixture = try await Fixture()
        let remote = fixture.remote
        await remote.attachAutoConnect(resumeAttempts: 1)
        let subscription = try await remote.subscribe(to: Self.secret)
        var notifications = subscription.notifications.makeAsyncIterator()

        let gate = Gate()
        let attempts = EventLog<Int>()
        let interrupted = await remote.submit(remote.operation { link throws(RemotePeripheralError) in
            attempts.append(attempts.all.count + 1)
            if attempts.all.count == 1 { try await cancellable { try await gate.pass() } }
            return try await link.readValue(Self.value)
        })
        await gate.arrived.wait()
        try await fixture.dropLinkFromPeripheral()
        gate.open()
        #expect(try await interrupted.value == [0x42], "run again on the new link")
        #expect(attempts.all == [1, 2])
        #expect(await remote.connectionCount == 2)
        try await fixture.events.wait("the subscription enabled again") { $0 == .resubscribed(count: 1) }

        // The peripheral notifies the new link: the same sequence hears it.
        let connection = try #require(await fixture.peripheralHost.connections.first)
        let handle = try #require(remote.link?.gatt.cache.characteristics.values.flatMap { $0 }.first { $0.uuid == Self.secret }?.valueHandle)
        #expect(try await fixture.peripheralHost.notify(handle, value: [7], to: connection.handle) == [connection.handle])
        #expect(await notifications.next().map { Array($0.value) } == [7])
        try await remote.unsubscribe(subscription)
        #expect(await notifications.next() == nil, "unsubscribing ends the sequence")
        await fixture.close()
    }

    @Test func withoutResumeAttemptsAnInterruptedOperationFailsButTheNextReconnects() async throws {
        let fixture = try await Fixture()
        let remote = fixture.remote
        await remote.attachAutoConnect()
        try await remote.connect()
        let gate = Gate()
        let interrupted = await remote.submit(remote.operation { link throws(RemotePeripheralError) in
            try await cancellable { try await gate.pass() }
            return try await link.readValue(Self.value)
        })
        await gate.arrived.wait()
        try await fixture.dropLinkFromPeripheral()
        gate.open()
        await #expect(throws: RemotePeripheralError.disconnected(.remoteUserTerminatedConnection)) { try await interrupted.value }
        #expect(try await remote.read(Self.value) == [0x42])
        #expect(await remote.connectionCount == 2)
        await fixture.close()
    }

    @Test func theAuthorizerRunsOncePerLinkAndAgainAfterAReconnection() async throws {
        let fixture = try await Fixture()
        let remote = fixture.remote
        await remote.attachAutoConnect()
        let authorizer = TokenAuthorizer(peripheral: remote, token: Self.token)
        await remote.attach(AutoAuthorizeDecorator(authorizer: authorizer))

        // Undeclared, the read is refused, authorized after the refusal and retried once.
        #expect(try await remote.read(Self.secret) == Array("secret".utf8))
        #expect(try await remote.read(Self.secret, requirements: .authorization) == Array("secret".utf8))
        #expect(authorizer.authorized.withLock { $0.writes } == 1, "one token write per link")
        try await fixture.dropLinkFromPeripheral()
        #expect(try await remote.read(Self.secret, requirements: .authorization) == Array("secret".utf8))
        #expect(authorizer.authorized.withLock { $0.writes } == 2, "the new link is authorized again")
        #expect(fixture.authorized.withLock { $0.count } == 1, "the new link wrote the token")
        await fixture.close()
    }

    @Test func aTimeoutOnTheHostClockIsRetriedThenFailsTyped() async throws {
        let fixture = try await Fixture()
        let remote = fixture.remote
        await remote.attachAutoConnect()
        try await remote.connect()
        let attempts = EventLog<Int>()
        let started = AsyncStream<Int>.makeStream()
        let hanging = await remote.submit(remote.operation(timeout: .seconds(2), retries: 1) { _ throws(RemotePeripheralError) -> [UInt8] in
            attempts.append(attempts.all.count + 1)
            started.continuation.yield(attempts.all.count)
            try await cancellable { try await Task.sleep(for: .seconds(3_600)) }
            return []
        })
        var starts = started.stream.makeAsyncIterator()
        #expect(await starts.next() == 1)
        await fixture.link.clock.advance(by: .seconds(2))
        #expect(await starts.next() == 2, "a timed-out attempt is retried")
        await fixture.link.clock.advance(by: .seconds(2))
        await #expect(throws: RemotePeripheralError.timedOut(.seconds(2))) { try await hanging.value }
        #expect(attempts.all == [1, 2])
        // The queue goes on.
        #expect(try await remote.read(Self.value, timeout: .seconds(2)) == [0x42])
        await fixture.close()
    }

    @Test func aCharacteristicThePeripheralLacksIsATypedError() async throws {
        let fixture = try await Fixture()
        let remote = fixture.remote
        await remote.attachAutoConnect()
        await #expect(throws: RemotePeripheralError.characteristicNotFound(BluetoothUUID(0xABCD), service: nil)) {
            try await remote.read(BluetoothUUID(0xABCD))
        }
        try await remote.disconnect()
        try await fixture.events.wait("the disconnection") { $0.isDisconnected }
        #expect(await !remote.isConnected)
        await fixture.close()
    }
}

extension RemotePeripheralLink {
    /// The value of the characteristic `uuid` on this link, read in the peripheral's error type.
    func readValue(_ uuid: BluetoothUUID) async throws(RemotePeripheralError) -> [UInt8] {
        let characteristic = try await characteristic(uuid)
        return try await withGATT { gatt throws(GATTError) in try await gatt.read(characteristic) }
    }
}

/// Runs `body` (a test's gate or sleep), its cancellation as the peripheral's error.
func cancellable(_ body: () async throws -> Void) async throws(RemotePeripheralError) {
    do {
        try await body()
    } catch {
        throw .cancelled
    }
}
