import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireTesting
import Testing

/// The state a peripheral reports for a link a central made to it: Connected.Idle while it is up,
/// Disconnected.Initial once it has ended (the machine of such a link only ever goes
/// Connecting → Connected.Idle → Initial: the host runs no GATT client procedure there unless asked).
@Suite("Peripheral: a central's link state")
struct PeripheralLinkStateTests {
    static let peripheralAddress = BluetoothAddress.randomStatic(0x0000_0000_0D00)

    @Test("a central's link is Connected.Idle on the peripheral while up, Disconnected.Initial after")
    func centralsLinkState() async throws {
        let link = VirtualLink(timing: .immediate)
        let peripheralController = link.addController(publicAddress: BluetoothAddress(value: 0x0000_0000_DD00))
        let centralController = link.addController(publicAddress: BluetoothAddress(value: 0x0000_0000_DD01))
        let peripheral = BluetoothHost(
            transport: VirtualTransport(controller: peripheralController),
            configuration: HostConfiguration(randomAddress: Self.peripheralAddress), clock: link.clock)
        let central = BluetoothHost(
            transport: VirtualTransport(controller: centralController),
            configuration: HostConfiguration(randomAddress: .randomStatic(0x0000_0000_0D01)), clock: link.clock)
        try await peripheral.start()
        try await central.start()
        _ = try await peripheral.startAdvertising(try Advertisement(name: "State"))
        let events = await peripheral.events()
        let toPeripheral = try await central.connect(to: Self.peripheralAddress)
        var seen: Connection?
        for await event in events {
            if case .connected(let connection) = event {
                seen = connection
                break
            }
        }
        let fromCentral = try #require(seen)
        #expect(fromCentral.role == .peripheral)
        #expect(await fromCentral.state == .connected(.idle))
        let gatt = await fromCentral.gatt
        #expect(gatt.state == .connected(.idle))
        #expect(await toPeripheral.state == .connected(.idle), "the central's own link: its peer's machine, before any discovery")
        try await toPeripheral.disconnect()
        #expect(await fromCentral.disconnection() == .remoteUserTerminatedConnection)
        #expect(await fromCentral.state == .initial)
        await central.close()
        await peripheral.close()
    }
}
