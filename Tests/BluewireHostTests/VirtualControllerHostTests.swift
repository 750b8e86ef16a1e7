import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireTesting
import Testing

/// Two Bluewire Hosts, central and peripheral, on one virtual link in one process.
@Suite("VirtualLink with two Bluewire hosts")
struct VirtualControllerHostTests {
    static let service = BluetoothUUID(0xFFE0)
    static let characteristic = BluetoothUUID(0xFFE1)
    static let value = Array("hello from the peripheral".utf8)

    @Test(
        "a central host finds the peripheral host's advertising, connects, discovers and reads its characteristic",
        arguments: [false, true])
    func centralReadsPeripheral(radio: Bool) async throws {
        let clock = TestClock()
        let link = VirtualLink(clock: clock, timing: radio ? .radio() : .immediate)
        // With radio timing, virtual time must pass for advertising and connection events: a pump moves
        // the clock 1 ms at a time, letting the hosts react in between.
        let pump = Task { if radio { await clock.runFreely() } }
        defer { pump.cancel() }
        let centralAddress = BluetoothAddress.randomStatic(0x0000_0000_0A01)
        let peripheralAddress = BluetoothAddress.randomStatic(0x0000_0000_0B02)
        let centralController = link.addController(publicAddress: VirtualAddress.centralPublic)
        let peripheralController = link.addController(publicAddress: VirtualAddress.peripheralPublic)
        let central = BluetoothHost(
            transport: VirtualTransport(controller: centralController),
            configuration: HostConfiguration(randomAddress: centralAddress), clock: clock)
        let peripheral = BluetoothHost(
            transport: VirtualTransport(controller: peripheralController),
            configuration: HostConfiguration(randomAddress: peripheralAddress), clock: clock)
        try await central.start()
        try await peripheral.start()

        var builder = GATTDatabaseBuilder()
        try builder.addService(Self.service)
        try builder.addCharacteristic(Self.characteristic, properties: [.read], permissions: [.read], value: .cached(Self.value))
        await peripheral.setDatabase(builder.build())
        _ = try await peripheral.startAdvertising(try Advertisement(name: "Virt", services: [Self.service]))

        var found: DiscoveredDevice?
        for try await device in await central.scan() where device.name == "Virt" {
            found = device
            break
        }
        let device = try #require(found)
        #expect(device.address == peripheralAddress)
        #expect(device.serviceUUIDs.contains(Self.service))

        let connection = try await central.connect(to: device.address)
        let services = try await connection.gatt.discoverServices(uuid: Self.service)
        let service = try #require(services.first)
        let characteristics = try await connection.gatt.discoverCharacteristics(of: service, uuid: Self.characteristic)
        let characteristic = try #require(characteristics.first)
        #expect(try await connection.gatt.read(characteristic) == Self.value)

        #expect(link.connections.count == 1)
        #expect(centralController.violations.isEmpty, "the central host broke no HCI rule")
        #expect(peripheralController.violations.isEmpty, "the peripheral host broke no HCI rule")
        if radio {
            // Advertising every 100 ms, then a handful of 30 ms connection events for discovery and the read.
            #expect(clock.monotonicNow > MonotonicInstant(microseconds: 100_000))
            #expect(clock.monotonicNow < MonotonicInstant(microseconds: 2_000_000))
        } else {
            #expect(clock.monotonicNow == .zero, "nothing needed virtual time")
        }
        await central.close()
        await peripheral.close()
    }
}
