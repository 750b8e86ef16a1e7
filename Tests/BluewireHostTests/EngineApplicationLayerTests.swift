import Bluewire
import BluewireTesting
import Synchronization
import Testing

/// The application layer on the engine's own link: `RemotePeripheral`, its queue and
/// `AutoAuthorizeDecorator` with `SecurityManagerAuthorizer`, and `EngineConnection.gatt`, between two
/// `EngineHost`s with the real Security Manager (swift-crypto) on the virtual link. The peripheral's
/// characteristic needs an encrypted link (Core Vol 3 Part C §10.3.1), so the first read is refused
/// with Insufficient Encryption until the central pairs.
@Suite("Application layer on EngineHost: RemotePeripheral, SecurityManagerAuthorizer, GATT client", .timeLimit(.minutes(1)))
struct EngineApplicationLayerTests {
    static let centralAddress = BluetoothAddress.randomStatic(0x0A0B_0C0D_0E11)
    static let peripheralAddress = BluetoothAddress.randomStatic(0x0A0B_0C0D_0E12)
    static let service = BluetoothUUID(0xFFE0)
    static let secret = BluetoothUUID(0xFFE1)
    static let open = BluetoothUUID(0xFFE2)
    /// 200 octets: at the default ATT_MTU of 23, a Read Request and 9 Read Blob Requests.
    static let longValue = (0..<200).map { UInt8($0 & 0xFF) }

    /// Counts the authorizer's calls around the Security Manager's.
    final class CountingAuthorizer: OperationAuthorizer {
        let base: SecurityManagerAuthorizer
        let calls = Mutex(0)
        init(_ base: SecurityManagerAuthorizer) { self.base = base }
        func authorize(for requirements: OperationRequirements) async throws(OperationError) {
            calls.withLock { $0 += 1 }
            try await base.authorize(for: requirements)
        }
    }

    struct Scene {
        let central: EngineHost
        let peripheral: EngineHost
        let secretHandle: UInt16
        let openHandle: UInt16

        func close() async {
            await central.close()
            await peripheral.close()
        }
    }

    static func scene() async throws -> Scene {
        let hosts = EngineHostsOnVirtualLink(central: centralAddress, peripheral: peripheralAddress)
        let (central, peripheral) = (hosts.central, hosts.peripheral)
        let crypto = SMPCrypto(SwiftCryptoSMP())
        for host in [central, peripheral] {
            await host.configureSecurity(HostSecurityConfiguration(pairing: PairingConfiguration(ioCapability: .noInputNoOutput), crypto: crypto))
        }
        var builder = GATTDatabaseBuilder()
        try builder.addService(service)
        let secret = try builder.addCharacteristic(secret, properties: [.read], permissions: [.readEncrypted], value: .cached([0x5E, 0xC2]))
        let open = try builder.addCharacteristic(open, properties: [.read], permissions: [.read], value: .cached(longValue))
        await peripheral.setDatabase(builder.build())
        _ = try await central.perform(.start).get()
        _ = try await peripheral.perform(.start).get()
        _ = try await peripheral.perform(.startAdvertising(.named("Secret"))).get()
        return Scene(central: central, peripheral: peripheral, secretHandle: secret.valueHandle, openHandle: open.valueHandle)
    }

    @Test("RemotePeripheral + AutoAuthorizeDecorator(SecurityManagerAuthorizer): the refused read pairs (Just Works) and returns the value")
    func refusedReadPairsThroughTheDecorator() async throws {
        let scene = try await Self.scene()
        let remote = RemotePeripheral(host: scene.central, peer: Self.peripheralAddress)
        let authorizer = CountingAuthorizer(SecurityManagerAuthorizer(remote))
        await remote.attach(AutoAuthorizeDecorator(authorizer: authorizer))
        try await remote.connect()
        let connection = try #require(remote.link?.connection)
        #expect(await connection.securityLevel == .unencrypted)
        // A raw Read Request (the engine does not raise security for it): the server's Insufficient
        // Encryption reaches the decorator, whose authorizer pairs; the read runs again.
        let value = try await remote.run(GATTOperations.read(handle: scene.secretHandle))
        #expect(value == [0x5E, 0xC2])
        #expect(authorizer.calls.withLock { $0 } == 1, "authorized once, after the refusal")
        #expect(await connection.securityLevel == .encryptedUnauthenticated)
        #expect(await connection.pairingMethod == .justWorks)
        // Encrypted now: the next read is served at once, nothing authorized again.
        #expect(try await remote.read(Self.secret) == [0x5E, 0xC2])
        #expect(authorizer.calls.withLock { $0 } == 1)
        await scene.close()
    }

    @Test("EngineGATTClient: a refused engine read pairs inside the engine; a long read of 9 blobs is one engine request")
    func gattClientOnTheEngine() async throws {
        let scene = try await Self.scene()
        let connection = try await scene.central.connect(to: Self.peripheralAddress)
        let gatt = await connection.gatt
        let database = try await gatt.discoverAll()
        let characteristics = database.flatMap(\.characteristics).map(\.characteristic)
        let secret = try #require(characteristics.first { $0.uuid == Self.secret })
        let open = try #require(characteristics.first { $0.uuid == Self.open })
        #expect(try await gatt.read(secret) == [0x5E, 0xC2])
        #expect(await connection.securityLevel == .encryptedUnauthenticated, "the engine paired on Insufficient Encryption")

        #expect(await gatt.mtu == 23)
        let before = await scene.central.requestsPerformed
        let value = try await gatt.read(open)
        let after = await scene.central.requestsPerformed
        #expect(value == Self.longValue, "Read + 9 Read Blobs at ATT_MTU 23")
        #expect(after - before == 1, "one engine request for the whole long read")
        // The same client for the same link.
        #expect(await connection.gatt.cache.characteristics.values.contains { $0.contains(open) })
        await scene.close()
    }

    @Test("EngineConnection.disconnection() names the reason; the client's queue and subscriptions end with the link")
    func linkEnd() async throws {
        let scene = try await Self.scene()
        let connection = try await scene.central.connect(to: Self.peripheralAddress)
        let gatt = await connection.gatt
        _ = try await gatt.discoverAll()
        async let ended = connection.disconnection()
        #expect(try await connection.disconnect(reason: .remoteUserTerminatedConnection) == .connectionTerminatedByLocalHost)
        #expect(await ended == .connectionTerminatedByLocalHost)
        #expect(await !connection.isConnected)
        await #expect(throws: GATTError.disconnected(.connectionTerminatedByLocalHost)) { try await gatt.read(handle: scene.openHandle) }
        await scene.close()
    }
}

extension EngineApplicationLayerTests {
    @Test("transitions(of:) reports the peer's machine; notify and indicate on the peripheral's EngineConnection reach the central's subscription")
    func transitionsAndServerCalls() async throws {
        let hosts = EngineHostsOnVirtualLink(central: Self.centralAddress, peripheral: Self.peripheralAddress)
        let (central, peripheral) = (hosts.central, hosts.peripheral)
        var builder = GATTDatabaseBuilder()
        try builder.addService(Self.service)
        let meter = try builder.addCharacteristic(Self.open, properties: [.read, .notify, .indicate], permissions: [.read], value: .cached([0]))
        await peripheral.setDatabase(builder.build())
        try await central.start()
        try await peripheral.start()
        let peripheralEvents = await peripheral.events()
        _ = try await peripheral.perform(.startAdvertising(.named("Meter"))).get()
        let transitions = await central.transitions(of: Self.peripheralAddress)
        let connection = try await central.connect(to: Self.peripheralAddress)
        var seen: [ConnectionState] = []
        for await transition in transitions {
            seen.append(transition.to)
            if transition.to == .connected(.idle) { break }
        }
        #expect(seen.contains(.disconnected(.connecting)) && seen.last == .connected(.idle), "\(seen)")

        var served: EngineConnection?
        for await event in peripheralEvents {
            if case .connected(let link) = event { served = await peripheral.connection(link); break }
        }
        let centralLink = try #require(served)
        let gatt = await connection.gatt
        let characteristic = try #require(try await gatt.discoverAll().flatMap(\.characteristics).first { $0.characteristic.uuid == Self.open })
        let notifications = try await gatt.subscribe(to: characteristic.characteristic)
        try await centralLink.notify(meter.valueHandle, value: [0x11])
        var iterator = notifications.makeAsyncIterator()
        #expect(try await iterator.next()?.value == [0x11])
        try await gatt.unsubscribe(notifications)
        let indications = try await gatt.subscribe(to: characteristic.characteristic, indications: true)
        try await centralLink.indicate(meter.valueHandle, value: [0x22])
        var confirmed = indications.makeAsyncIterator()
        let indication = try await confirmed.next()
        #expect(indication?.value == [0x22] && indication?.isIndication == true)
        await central.close()
        await peripheral.close()
    }
}
