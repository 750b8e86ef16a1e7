import BluewireATT
import BluewireCore
import BluewireGATT
import Testing

/// A server built with the database builder, and the handles it assigned.
private struct Fixture {
    var server: GATTServer
    var gap: GATTServiceReference
    var gatt: GATTServiceReference
    var battery: GATTServiceReference
    var secondary: GATTServiceReference
    var uart: GATTServiceReference
    let deviceName: GATTCharacteristicHandles
    let serviceChanged: GATTCharacteristicHandles
    let batteryLevel: GATTCharacteristicHandles
    let rx: GATTCharacteristicHandles
    let secret: GATTCharacteristicHandles
    let name: [UInt8]

    static let connection: UInt16 = 0x0040

    init() throws {
        var builder = GATTDatabaseBuilder()
        name = Array("Bluewire end-to-end test peripheral with a long name".utf8)
        gap = try builder.addService(.genericAccess)
        deviceName = try builder.addCharacteristic(.deviceName, properties: [.read], permissions: [.read], value: .cached(name))
        gatt = try builder.addService(.genericAttribute)
        serviceChanged = try builder.addCharacteristic(
            .serviceChanged, properties: [.indicate], permissions: [], value: .cached([]))
        secondary = try builder.addService(BluetoothUUID(0xFEED), kind: .secondary)
        try builder.addCharacteristic(BluetoothUUID(0x2A19), properties: [.read], permissions: [.read], value: .cached([1]))
        battery = try builder.addService(BluetoothUUID(0x180F))
        try builder.addIncludedService(secondary)
        batteryLevel = try builder.addCharacteristic(
            BluetoothUUID(0x2A19), properties: [.read, .notify], permissions: [.read], value: .cached([87]))
        try builder.addDescriptor(.characteristicUserDescription, permissions: [.read], value: .cached(Array("level".utf8)))
        uart = try builder.addService(nordicUART)
        rx = try builder.addCharacteristic(
            nordicUART, properties: [.write, .notify], permissions: [.read, .write], value: .cached([]))
        secret = try builder.addCharacteristic(
            BluetoothUUID(0xFFF2), properties: [.read], permissions: [.readEncrypted], value: .cached([0x5E]))
        // The references returned while adding hold the range as it was then; take the final ones.
        let final = builder.addedServices
        func closed(_ reference: GATTServiceReference) -> GATTServiceReference {
            final.first { $0.startHandle == reference.startHandle } ?? reference
        }
        (gap, gatt, secondary, battery, uart) = (closed(gap), closed(gatt), closed(secondary), closed(battery), closed(uart))
        server = GATTServer(database: builder.build())
        server.connect(Fixture.connection)
    }

    /// Runs a client procedure against the server: every request is encoded, handed to the server as
    /// bytes, and its answer decoded and fed back, as it would cross the air.
    mutating func run<P: GATTClientProcedure>(_ procedure: P) throws -> P.Output {
        var procedure = procedure
        var step = try procedure.start()
        var exchanges = 0
        while case .request(let pdu) = step {
            exchanges += 1
            guard exchanges < 1_000 else { throw GATTClientError.handlesNotIncreasing(request: pdu.opcode, handle: 0) }
            let reply = server.handle(pdu.encode(), from: Fixture.connection)
            let answer = try #require(reply, "no answer to \(pdu.opcode)")
            step = try procedure.receive(try ATTPDU(decoding: answer))
        }
        guard case .finished(let output) = step else { throw GATTClientError.invalidHandleRange(start: 0, end: 0) }
        return output
    }

    func value(at handle: UInt16) -> [UInt8]? {
        server.database.attributes.first { $0.handle == handle }?.cachedValue
    }
}

private func service(_ reference: GATTServiceReference) -> GATTService {
    GATTService(handle: reference.startHandle, endHandle: reference.endHandle, uuid: reference.uuid,
                isPrimary: reference.kind == .primary)
}

@Suite("GATT client procedures against the real GATT server, in process")
struct GATTClientServerEndToEndTests {
    @Test("Discovery finds the server's primary services, includes, characteristics and descriptors")
    func discoveryMatchesTheDatabase() throws {
        var fixture = try Fixture()
        let services = try fixture.run(DiscoverAllPrimaryServices())
        #expect(services == [service(fixture.gap), service(fixture.gatt), service(fixture.battery), service(fixture.uart)])

        let batteryByUUID = try fixture.run(DiscoverPrimaryServiceByServiceUUID(uuid: BluetoothUUID(0x180F)))
        #expect(batteryByUUID == [service(fixture.battery)])

        let includes = try fixture.run(FindIncludedServices(of: service(fixture.battery)))
        #expect(includes.map(\.serviceHandle) == [fixture.secondary.startHandle])
        #expect(includes.map(\.uuid) == [BluetoothUUID(0xFEED)])

        let uartCharacteristics = try fixture.run(DiscoverCharacteristics(of: service(fixture.uart)))
        #expect(uartCharacteristics.map(\.valueHandle) == [fixture.rx.valueHandle, fixture.secret.valueHandle])
        #expect(uartCharacteristics.first?.uuid == nordicUART)
        #expect(uartCharacteristics.last?.endHandle == fixture.uart.endHandle)

        let battery = try #require(try fixture.run(DiscoverCharacteristics(of: service(fixture.battery), uuid: BluetoothUUID(0x2A19))).first)
        #expect(battery.valueHandle == fixture.batteryLevel.valueHandle)
        let descriptors = try fixture.run(DiscoverAllCharacteristicDescriptors(of: battery))
        #expect(descriptors.map(\.uuid) == [.clientCharacteristicConfiguration, .characteristicUserDescription])
        #expect(descriptors.first?.handle == fixture.batteryLevel.clientConfigurationHandle)
    }

    @Test("Read Long reassembles a value longer than ATT_MTU − 1 from the server's blobs")
    func readLongFromServer() throws {
        var fixture = try Fixture()
        #expect(fixture.name.count > 2 * 22, "the fixture must need several blobs")
        #expect(try fixture.run(ReadLongCharacteristicValues(handle: fixture.deviceName.valueHandle, mtu: 23)) == fixture.name)
        #expect(try fixture.run(ReadCharacteristicValue(handle: fixture.deviceName.valueHandle)) == Array(fixture.name.prefix(22)))
    }

    @Test("Long write lands the whole value on the server and reads back the same")
    func longWriteToServer() throws {
        var fixture = try Fixture()
        let value = ramp(100, from: 0x20)
        try fixture.run(PreparedWrites.writeLong(handle: fixture.rx.valueHandle, value: value, mtu: 23))
        #expect(fixture.value(at: fixture.rx.valueHandle) == value)
        #expect(fixture.server.preparedWriteCount(for: Fixture.connection) == 0)
        #expect(try fixture.run(ReadLongCharacteristicValues(handle: fixture.rx.valueHandle, mtu: 23)) == value)
    }

    @Test("A reliable write to a read-only attribute is refused and writes nothing")
    func reliableWriteIsAllOrNothing() throws {
        var fixture = try Fixture()
        let before = fixture.value(at: fixture.rx.valueHandle)
        #expect(throws: GATTClientError.self) {
            try fixture.run(PreparedWrites.reliable(
                [(handle: fixture.rx.valueHandle, value: [1, 2, 3]), (handle: fixture.deviceName.valueHandle, value: [4])],
                mtu: 23))
        }
        #expect(fixture.value(at: fixture.rx.valueHandle) == before)
        #expect(fixture.server.preparedWriteCount(for: Fixture.connection) == 0, "the client cancelled the queue")
    }

    @Test("Subscribing and unsubscribing change the server's view of the client's CCCD")
    func subscribeAgainstServer() throws {
        var fixture = try Fixture()
        let service = service(fixture.battery)
        let battery = try #require(try fixture.run(DiscoverCharacteristics(of: service, uuid: BluetoothUUID(0x2A19))).first)
        let cccd = try fixture.run(ConfigureClientCharacteristicConfiguration.subscribe(to: battery))
        #expect(cccd == fixture.batteryLevel.clientConfigurationHandle)
        #expect(fixture.server.subscription(connection: Fixture.connection, valueHandle: battery.valueHandle).notifications)
        _ = try fixture.run(ConfigureClientCharacteristicConfiguration.unsubscribe(from: battery, descriptorHandle: cccd))
        #expect(!fixture.server.subscription(connection: Fixture.connection, valueHandle: battery.valueHandle).notifications)
    }

    @Test("The server's Insufficient Encryption reaches the client as a typed error until the link is encrypted")
    func permissionErrorsAreTyped() throws {
        var fixture = try Fixture()
        let handle = fixture.secret.valueHandle
        #expect(throws: GATTClientError.errorResponse(.insufficientEncryption, requestOpcode: .readRequest, handle: handle)) {
            try fixture.run(ReadCharacteristicValue(handle: handle))
        }
        fixture.server.setSecurityLevel(.encrypted, for: Fixture.connection)
        #expect(try fixture.run(ReadCharacteristicValue(handle: handle)) == [0x5E])
    }

    @Test("Read Multiple and Read Using Characteristic UUID read what the database holds")
    func readMultipleAndByUUID() throws {
        var fixture = try Fixture()
        let handles = [fixture.batteryLevel.valueHandle, fixture.secret.valueHandle]
        // One unreadable handle fails the whole Read Multiple (Core Vol 3 Part F §3.4.4.7).
        #expect(throws: GATTClientError.errorResponse(.insufficientEncryption, requestOpcode: .readMultipleRequest, handle: handles[1])) {
            try fixture.run(ReadMultipleCharacteristicValues(handles: handles))
        }
        fixture.server.setSecurityLevel(.encrypted, for: Fixture.connection)
        #expect(try fixture.run(ReadMultipleCharacteristicValues(handles: handles)) == [87, 0x5E])
        let levels = try fixture.run(ReadUsingCharacteristicUUID(uuid: BluetoothUUID(0x2A19)))
        #expect(levels.map(\.value) == [[1], [87]], "the secondary service's level and the battery's")
    }

    @Test("After a Service Changed range, rediscovering it brings the cache in line with the new database")
    func serviceChangedRediscovery() throws {
        var fixture = try Fixture()
        var cache = GATTClientCache()
        cache.insert(services: try fixture.run(DiscoverAllPrimaryServices()))
        let gattService = try #require(cache.services.first { $0.uuid == .genericAttribute })
        cache.insert(characteristics: try fixture.run(DiscoverCharacteristics(of: gattService)), of: gattService)
        #expect(cache.serviceChangedValueHandle == fixture.serviceChanged.valueHandle)

        // The server adds a service after the last one and indicates the range it now occupies.
        var builder = GATTDatabaseBuilder()
        try builder.skipHandles(to: fixture.uart.endHandle + 1)
        let added = try builder.addService(BluetoothUUID(0x180A))
        try builder.addCharacteristic(BluetoothUUID(0x2A29), properties: [.read], permissions: [.read], value: .cached(Array("Acme".utf8)))
        let newAttributes = builder.build().attributes
        fixture.server.database = try GATTDatabase(attributes: fixture.server.database.attributes + newAttributes)
        let indication = [UInt8(truncatingIfNeeded: added.startHandle), UInt8(added.startHandle >> 8), 0xFF, 0xFF]

        let rediscover = try cache.handleServiceChanged(indication[...])
        cache.insert(services: try fixture.run(
            DiscoverAllPrimaryServices(startingHandle: rediscover.lowerBound, endingHandle: rediscover.upperBound)))
        #expect(cache.services == (try fixture.run(DiscoverAllPrimaryServices())))
        #expect(cache.services.last?.uuid == BluetoothUUID(0x180A))
        #expect(cache.serviceChangedValueHandle == fixture.serviceChanged.valueHandle, "untouched services keep their contents")
    }
}
