@_spi(Testing) import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireTesting
import HostTestSupport
import Testing

/// The peripheral role on `VirtualLink`: Bluewire hosts as peripheral and centrals, on virtual
/// controllers that support extended advertising and record every HCI rule a host breaks.
@Suite("Peripheral: advertising and serving on a virtual link")
struct PeripheralVirtualLinkTests {
    static let service = BluetoothUUID(0xFFE0)

    struct Fixture {
        let link = VirtualLink(timing: .immediate)
        var controllers: [VirtualController] = []
        var hosts: [BluetoothHost] = []

        /// Host 0 is the peripheral (address …0B00); the others are centrals.
        init(hosts count: Int) async throws {
            for index in 0..<count {
                let controller = link.addController(publicAddress: BluetoothAddress(value: 0x0000_0000_AA00 + UInt64(index)))
                let host = BluetoothHost(
                    transport: VirtualTransport(controller: controller),
                    configuration: HostConfiguration(randomAddress: Self.address(index)), clock: link.clock)
                try await host.start()
                controllers.append(controller)
                hosts.append(host)
            }
        }

        static func address(_ index: Int) -> BluetoothAddress { .randomStatic(0x0000_0000_0B00 + UInt64(index)) }

        func database() throws -> GATTDatabase {
            var builder = GATTDatabaseBuilder()
            try builder.addService(PeripheralVirtualLinkTests.service)
            try builder.addCharacteristic(BluetoothUUID(0xFFE1), properties: [.read], permissions: [.read], value: .cached([0x42]))
            return builder.build()
        }

        func close() async {
            for controller in controllers { #expect(controller.violations.isEmpty, "HCI rules broken: \(controller.violations)") }
            for host in hosts { await host.close() }
        }
    }

    @Test func extendedAdvertisingIsChosenAndRestartsAfterEachConnectionSoTwoCentralsConnect() async throws {
        let fixture = try await Fixture(hosts: 3)
        let peripheral = fixture.hosts[0]
        let events = PeripheralEventRecorder(await peripheral.peripheralEvents())
        await peripheral.setDatabase(try fixture.database())
        let plan = try await peripheral.startAdvertising(try Advertisement(name: "Virtual", services: [Self.service]))
        #expect(plan.kind == .extended(legacyPDUs: true), "the virtual controller lists the extended advertising commands")
        for central in fixture.hosts.dropFirst() {
            let connection = try await central.connect(to: Fixture.address(0))
            let gatt = await connection.gatt
            let service = try #require(try await gatt.discoverServices(uuid: Self.service).first)
            let characteristic = try #require(try await gatt.discoverCharacteristics(of: service).first)
            #expect(try await gatt.read(characteristic) == [0x42])
        }
        try await events.wait(for: 3, "third start of advertising") { if case .advertisingStarted = $0 { true } else { false } }
        #expect(await peripheral.connections.count == 2)
        #expect(await peripheral.isAdvertising)
        await fixture.close()
    }

    @Test(arguments: [Advertisement.CommandSet.legacy, .extended])
    func aConnectionRightBehindTheEnableIsSeenAndAdvertisingResumes(commandSet: Advertisement.CommandSet) async throws {
        let fixture = try await Fixture(hosts: 2)
        let (peripheral, central) = (fixture.hosts[0], fixture.hosts[1])
        let events = PeripheralEventRecorder(await peripheral.peripheralEvents())
        // The central's controller is already initiating (the command has been accepted): it connects
        // as soon as advertising starts, and LE Connection Complete follows the enable's Command
        // Complete at once. (The central host, which did not ask through `connect`, then drops the link.)
        _ = try await central.send(.leExtendedCreateConnection(LEExtendedCreateConnection(
            peerAddress: Fixture.address(0), le1M: .init(connection: LEConnectionParameters()))))
        var advertisement = try Advertisement(name: "Race")
        advertisement.commandSet = commandSet
        try await peripheral.startAdvertising(advertisement)
        try await events.wait(for: 2, "advertising resumed") { if case .advertisingStarted = $0 { true } else { false } }
        let kinds = await events.events.compactMap { event -> String? in
            switch event {
            case .advertisingStarted: "on"
            case .advertisingStopped: "off"
            case .connected: "connected"
            default: nil
            }
        }
        #expect(kinds == ["on", "connected", "off", "on"], "in the controller's order, whichever task ran first")
        #expect(await peripheral.isAdvertising, "advertising resumed after the connection stopped it")
        await fixture.close()
    }

    @Test func nonConnectableAdvertisingIsSeenAsSuch() async throws {
        let fixture = try await Fixture(hosts: 2)
        let (peripheral, scanner) = (fixture.hosts[0], fixture.hosts[1])
        let advertisement = Advertisement(
            data: [.completeLocalName("Beacon"), .manufacturerSpecificData(companyIdentifier: 0xFFFF, data: [1, 2, 3])],
            isConnectable: false)
        try await peripheral.startAdvertising(advertisement)
        var seen: DiscoveredDevice?
        for try await device in await scanner.scan() where device.name == "Beacon" {
            seen = device
            break
        }
        let device = try #require(seen)
        #expect(!device.connectable)
        #expect(device.manufacturerData == [DiscoveredDevice.ManufacturerData(companyIdentifier: 0xFFFF, data: [1, 2, 3])])
        await fixture.close()
    }

    @Test func extendedPDUsCarryAdvertisingDataBeyond31Octets() async throws {
        let fixture = try await Fixture(hosts: 2)
        let (peripheral, scanner) = (fixture.hosts[0], fixture.hosts[1])
        let payload = (0..<200).map { UInt8($0) }
        let advertisement = Advertisement(
            data: [.completeLocalName("Long"), .manufacturerSpecificData(companyIdentifier: 0xFFFF, data: payload)],
            isConnectable: false)
        let plan = try await peripheral.startAdvertising(advertisement)
        #expect(plan.kind == .extended(legacyPDUs: false))
        var seen: DiscoveredDevice?
        for try await device in await scanner.scan() where device.name == "Long" {
            seen = device
            break
        }
        #expect(seen?.manufacturerData.first?.data == payload)
        await fixture.close()
    }
}
