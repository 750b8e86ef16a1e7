@_spi(Testing) import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireTesting
import HostTestSupport
import Testing

/// The peripheral side of `BluetoothHost` (Docs/Design.md "BluetoothHost over the engine"), where
/// the engine leaves something to the host: setting advertising up again
/// after a Hardware Error, one indication sent to several centrals, and writes to dynamic values,
/// which raise no engine event of their own.
@Suite("Peripheral: what the shell adds to the engine")
struct PeripheralShellTests {
    static let peripheralAddress = BluetoothAddress.randomStatic(0x0000_0000_0C00)

    /// A peripheral host and `centrals` central hosts, on one immediate virtual link.
    struct Bench {
        let link = VirtualLink(timing: .immediate)
        var controllers: [VirtualController] = []
        var peripheral: BluetoothHost
        var centrals: [BluetoothHost] = []

        init(centrals count: Int) async throws {
            let controller = link.addController(publicAddress: BluetoothAddress(value: 0x0000_0000_CC00))
            controllers.append(controller)
            peripheral = BluetoothHost(
                transport: VirtualTransport(controller: controller),
                configuration: HostConfiguration(randomAddress: PeripheralShellTests.peripheralAddress),
                clock: link.clock)
            try await peripheral.start()
            for index in 1..<(count + 1) {
                let central = link.addController(publicAddress: BluetoothAddress(value: 0x0000_0000_CC00 + UInt64(index)))
                controllers.append(central)
                let host = BluetoothHost(
                    transport: VirtualTransport(controller: central),
                    configuration: HostConfiguration(randomAddress: .randomStatic(0x0000_0000_0C00 + UInt64(index))),
                    clock: link.clock)
                try await host.start()
                centrals.append(host)
            }
        }

        func close() async {
            for controller in controllers { #expect(controller.violations.isEmpty, "HCI rules broken: \(controller.violations)") }
            await peripheral.close()
            for central in centrals { await central.close() }
        }
    }

    @Test("after a Hardware Error on its controller the host sets advertising up again before it reports the error")
    func advertisingIsBackBeforeTheHardwareErrorIsReported() async throws {
        let bench = try await Bench(centrals: 1)
        let peripheral = bench.peripheral
        let plan = try await peripheral.startAdvertising(try Advertisement(name: "Phoenix"))
        let events = await peripheral.events()
        let peripheralEvents = PeripheralEventRecorder(await peripheral.peripheralEvents())
        bench.controllers[0].injectHardwareError(code: 0x17)
        for await event in events {
            if case .hardwareError(let code) = event {
                #expect(code == 0x17)
                break
            }
        }
        #expect(await peripheral.isAdvertising, "advertising is on again when the error is reported")
        #expect(await peripheral.advertisingPlan == plan)
        try await peripheralEvents.wait(for: 1, "advertising started again") { if case .advertisingStarted = $0 { true } else { false } }
        // The controller really advertises: a central connects.
        let connection = try await bench.centrals[0].connect(to: Self.peripheralAddress)
        #expect(connection.role == .central)
        await bench.close()
    }

    @Test("an indication to every subscribed central ends with each one's confirmation; an unsubscribed central is left out")
    func oneIndicationToSeveralCentrals() async throws {
        let bench = try await Bench(centrals: 3)
        let peripheral = bench.peripheral
        var builder = GATTDatabaseBuilder()
        try builder.addService(BluetoothUUID(0xFFD0))
        let indicating = try builder.addCharacteristic(BluetoothUUID(0xFFD1), properties: [.indicate], permissions: [], value: .cached([])).valueHandle
        await peripheral.setDatabase(builder.build())
        try await peripheral.startAdvertising(try Advertisement(name: "Fan-out"))
        var subscriptions: [CharacteristicSubscription] = []
        var handles: [UInt16] = []
        for (index, central) in bench.centrals.enumerated() {
            let connection = try await central.connect(to: Self.peripheralAddress)
            let gatt = await connection.gatt
            let service = try #require(try await gatt.discoverServices(uuid: BluetoothUUID(0xFFD0)).first)
            let characteristic = try #require(try await gatt.discoverCharacteristics(of: service).first)
            // The last central stays unsubscribed.
            if index < 2 { subscriptions.append(try await gatt.subscribe(to: characteristic, indications: true)) }
        }
        for connection in await peripheral.connections { handles.append(connection.handle) }
        let subscribed = await peripheral.subscriptions(of: indicating).map(\.connection)
        #expect(subscribed.count == 2)
        let outcome = try await peripheral.indicate(indicating, value: [7])
        #expect(outcome == IndicationOutcome(confirmed: subscribed.sorted()))
        for subscription in subscriptions {
            var iterator = subscription.makeAsyncIterator()
            let indication = try await iterator.next()
            #expect(indication?.value == [7][...] && indication?.isIndication == true)
        }
        for handle in handles {
            let state = try #require(await peripheral.serverState(for: handle))
            #expect(state.pendingIndicationCalls == 0 && !state.indicationOutstanding && state.queuedIndications == 0)
        }
        await bench.close()
    }

    @Test("a write a dynamic handler accepts is a peripheral event even when nothing follows it")
    func aLoneDynamicWriteIsReported() async throws {
        let bench = try await Bench(centrals: 1)
        let peripheral = bench.peripheral
        var builder = GATTDatabaseBuilder()
        try builder.addService(BluetoothUUID(0xFFD0))
        let dynamic = try builder.addCharacteristic(
            BluetoothUUID(0xFFD2), properties: [.writeWithoutResponse], permissions: [.write],
            value: .dynamic(GATTDynamicValue(write: { _ throws(GATTAttributeError) in }))).valueHandle
        await peripheral.setDatabase(builder.build())
        let events = PeripheralEventRecorder(await peripheral.peripheralEvents())
        try await peripheral.startAdvertising(try Advertisement(name: "Sink"))
        let connection = try await bench.centrals[0].connect(to: Self.peripheralAddress)
        let gatt = await connection.gatt
        let service = try #require(try await gatt.discoverServices(uuid: BluetoothUUID(0xFFD0)).first)
        _ = try await gatt.discoverCharacteristics(of: service)
        try await gatt.writeWithoutResponse([0x5A], to: dynamic)
        try await events.wait(for: 1, "the write") { if case .write = $0 { true } else { false } }
        let handle = try #require(await peripheral.connections.first).handle
        #expect(await events.events.contains(.write(PeripheralWrite(connection: handle, handle: dynamic, value: [0x5A], offset: 0, kind: .command))))
        await bench.close()
    }
}
