@_spi(Testing) import Bluewire
import BluewireCore
import BluewireGATT
import BluewireTesting
import HostTestSupport
import Synchronization
import Testing

/// A Bluewire peripheral serving `HostileDatabase` on a virtual link (immediate timing), a
/// well-behaved Bluewire central connected to it, and a `RawATTCentral` connected too.
struct HostileBench {
    static let peripheralAddress = BluetoothAddress.randomStatic(0x0000_0000_AB01)
    static let goodAddress = BluetoothAddress.randomStatic(0x0000_0000_AB02)

    let clock: TestClock
    let peripheralController: VirtualController
    let goodController: VirtualController
    let peripheralTransport: ObservedVirtualTransport
    let peripheral: BluetoothHost
    let good: BluetoothHost
    let goodConnection: Connection
    /// The peripheral's handles of the two centrals' links.
    let goodHandle: UInt16
    let hostileHandle: UInt16
    let hostile: RawATTCentral
    let fixture: HostileDatabase
    /// Poked by the peripheral's transport and host (`settleQuiet`).
    let signal: BenchSignal

    static func make() async throws -> HostileBench {
        let clock = TestClock()
        let link = VirtualLink(clock: clock, timing: .immediate)
        let peripheralController = link.addController(publicAddress: VirtualAddress.peripheralPublic)
        let goodController = link.addController(publicAddress: VirtualAddress.centralPublic)
        let signal = BenchSignal()
        let peripheralTransport = ObservedVirtualTransport(controller: peripheralController, signal: signal)
        let peripheral = BluetoothHost(
            transport: peripheralTransport, configuration: HostConfiguration(randomAddress: peripheralAddress),
            clock: clock, logger: .provokedFailure)
        let good = BluetoothHost(
            transport: VirtualTransport(controller: goodController), configuration: HostConfiguration(randomAddress: goodAddress),
            clock: clock)
        signal.watchDiagnostics(of: peripheral)
        try await peripheral.start()
        try await good.start()
        let fixture = try HostileDatabase()
        await peripheral.setDatabase(fixture.database)
        _ = try await peripheral.startAdvertising(try Advertisement(name: "Hostile", services: [HostileDatabase.service]))

        let goodConnection = try await good.connect(to: peripheralAddress, parameters: FaultBench.connectionParameters)
        // Its engine stops advertising when it takes the good central's LE Connection Complete and
        // starts again when the new enable is answered: until it has the link, `advertising` is stale.
        try await peripheral.until("the peripheral has the good central and advertises again") { $0.links == 1 && $0.advertising }
        let hostile = RawATTCentral(link: link, publicAddress: VirtualAddress.thirdPublic)
        try hostile.connect(to: peripheralAddress)
        try await peripheral.until("the peripheral has both centrals") { $0.links == 2 }
        let links = await peripheral.connections
        let hostileHandle = try #require(links.first { $0.peer.value == VirtualAddress.thirdPublic.value }?.handle)
        let goodHandle = try #require(links.first { $0.peer == goodAddress }?.handle)
        return HostileBench(
            clock: clock, peripheralController: peripheralController, goodController: goodController,
            peripheralTransport: peripheralTransport, peripheral: peripheral, good: good, goodConnection: goodConnection,
            goodHandle: goodHandle, hostileHandle: hostileHandle, hostile: hostile, fixture: fixture, signal: signal)
    }

    /// Waits until the peripheral has handled everything delivered to it and its packets are out,
    /// re-checking at each poke of `signal` (`BenchSignal`).
    func settleQuiet() async throws {
        try await settle("the peripheral is quiet", on: signal) {
            let handled = peripheralTransport.isQuiet
            let d = await peripheral.diagnostics
            return handled && d.aclPacketsInFlight == peripheralController.aclBuffersInUse && d.aclPacketsQueued == 0
        }
    }

    func close() async {
        await good.close()
        await peripheral.close()
    }
}

/// One value per connection: each central reads back what it wrote, whatever the others write.
final class PerConnectionRegisters: Sendable {
    private let values = Mutex<[UInt16: [UInt8]]>([:])

    var dynamicValue: GATTDynamicValue {
        GATTDynamicValue(
            read: { [self] (request: GATTReadRequest) throws(GATTAttributeError) -> [UInt8] in
                try request.part(of: values.withLock { $0[request.connection] ?? [] })
            },
            write: { [self] (request: GATTWriteRequest) throws(GATTAttributeError) in
                try values.withLock { (values: inout [UInt16: [UInt8]]) throws(GATTAttributeError) in
                    var value = values[request.connection] ?? []
                    guard request.offset <= value.count else { throw GATTAttributeError(.invalidOffset) }
                    value.removeSubrange(request.offset...)
                    value += request.value
                    guard value.count <= 512 else { throw GATTAttributeError(.invalidAttributeValueLength) }
                    values[request.connection] = value
                }
            })
    }
}

/// The hostile test's database: a name, a read-only 300-byte value, a per-connection register, a
/// notifying counter, an indicating alarm, a writable control value, a value no one may read, and a
/// secondary service with a descriptor.
struct HostileDatabase {
    static let service = BluetoothUUID(0xFC00)
    static let staticUUID = BluetoothUUID(0xFC01)
    static let registerUUID = BluetoothUUID(0xFC02)
    static let counterUUID = BluetoothUUID(0xFC03)
    static let alarmUUID = BluetoothUUID(0xFC04)
    let database: GATTDatabase
    let staticValue: [UInt8]
    let staticHandle: UInt16
    let control: GATTCharacteristicHandles
    let targets: HostileTargets
    let registers = PerConnectionRegisters()

    init() throws {
        var builder = GATTDatabaseBuilder()
        staticValue = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 5) }
        try builder.addService(.genericAccess)
        try builder.addCharacteristic(.deviceName, properties: [.read], permissions: [.read], value: .cached(Array("Hostile bench".utf8)))
        try builder.addService(Self.service)
        let fixed = try builder.addCharacteristic(Self.staticUUID, properties: [.read], permissions: [.read], value: .cached(staticValue))
        let register = try builder.addCharacteristic(
            Self.registerUUID, properties: [.read, .write], permissions: [.read, .write], value: .dynamic(registers.dynamicValue))
        let counter = try builder.addCharacteristic(Self.counterUUID, properties: [.read, .notify], permissions: [.read], value: .cached([0]))
        let alarm = try builder.addCharacteristic(Self.alarmUUID, properties: [.read, .indicate], permissions: [.read], value: .cached([0]))
        control = try builder.addCharacteristic(
            BluetoothUUID(0xFC05), properties: [.read, .write, .writeWithoutResponse], permissions: [.read, .write], value: .cached([0]))
        try builder.addCharacteristic(BluetoothUUID(0xFC06), properties: [.write], permissions: [.write], value: .cached([1, 2, 3]))
        try builder.addService(BluetoothUUID(parsing: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")!, kind: .secondary)
        try builder.addCharacteristic(BluetoothUUID(0xFC07), properties: [.read], permissions: [.read], value: .cached([7]))
        try builder.addDescriptor(.characteristicUserDescription, permissions: [.read], value: .cached(Array("seven".utf8)))
        database = builder.build()
        staticHandle = fixed.valueHandle
        targets = HostileTargets(
            lastHandle: database.attributes.last?.handle ?? 0, staticHandle: fixed.valueHandle, staticValue: staticValue,
            writable: [register.valueHandle, control.valueHandle],
            configurations: [counter.clientConfigurationHandle, alarm.clientConfigurationHandle].compactMap { $0 })
    }
}

/// The well-behaved central: until told to stop (and at least once), it writes its register (a
/// Write Request, or prepared writes) and reads it back, reads the static value whole (Read Blob),
/// and receives a notification and an indication the peripheral sends it. Returns the rounds done.
enum WellBehavedCentral {
    static func run(_ bench: HostileBench, until stop: Completion) async throws -> Int {
        let gatt = await bench.goodConnection.gatt
        try await gatt.exchangeMTU()
        let characteristics = try await gatt.discoverAll().flatMap(\.characteristics).map(\.characteristic)
        func find(_ uuid: BluetoothUUID) throws -> GATTCharacteristic { try #require(characteristics.first { $0.uuid == uuid }) }
        let fixed = try find(HostileDatabase.staticUUID), register = try find(HostileDatabase.registerUUID)
        let counter = try find(HostileDatabase.counterUUID), alarm = try find(HostileDatabase.alarmUUID)
        var notifications = try await gatt.subscribe(to: counter).makeAsyncIterator()
        var indications = try await gatt.subscribe(to: alarm, indications: true).makeAsyncIterator()
        var round = 0
        repeat {
            let value = (0..<(round * 53 % 500 + 1)).map { UInt8(truncatingIfNeeded: $0 &+ round) }
            if round % 2 == 0 {
                try await gatt.write(value, to: register)
            } else {
                try await gatt.writeLong(value, to: register.valueHandle)
            }
            #expect(try await gatt.read(register) == value, "round \(round): the register reads back what was written")
            #expect(try await gatt.read(fixed) == bench.fixture.staticValue, "round \(round): the static value")
            let tag = [UInt8(truncatingIfNeeded: round), UInt8(truncatingIfNeeded: round >> 8)]
            #expect(try await bench.peripheral.notify(counter.valueHandle, value: tag, to: bench.goodHandle) == [bench.goodHandle])
            #expect(try await notifications.next()?.value == tag[...], "round \(round): the notification, in order")
            let outcome = try await bench.peripheral.indicate(alarm.valueHandle, value: tag + [1], to: bench.goodHandle)
            #expect(outcome.confirmed == [bench.goodHandle], "round \(round): \(outcome)")
            #expect(try await indications.next()?.value == (tag + [1])[...], "round \(round): the indication, in order")
            round += 1
        } while !stop.isDone
        return round
    }
}
