import Bluewire
import BluewireTesting
import Testing

/// `EngineHost` carries the engine's per-peer connection state machine: `state(of:)`, the
/// `.stateChanged` events, and the transport ending as a Failure (cause `.transportEnded`) reported
/// to observers before their streams end. Two EngineHosts on the virtual link (`VirtualTransport`).
@Suite("EngineHost: connection state machine")
struct EngineHostStateTests {
    static let centralAddress = BluetoothAddress.randomStatic(0x0A0B_0C0D_0E01)
    static let peripheralAddress = BluetoothAddress.randomStatic(0x0A0B_0C0D_0E02)

    @Test("connect → Connecting → Connected.Idle; the transport ending → Error (.transportEnded), no Disconnect")
    func transportEndedIsFailure() async throws {
        let clock = TestClock()
        let link = VirtualLink(clock: clock, timing: .immediate)
        let centralTransport = VirtualTransport(controller: link.addController(publicAddress: VirtualAddress.centralPublic))
        let central = EngineHost(transport: centralTransport, configuration: HostEngineConfiguration(randomAddress: Self.centralAddress), clock: clock)
        let peripheral = EngineHost(
            transport: VirtualTransport(controller: link.addController(publicAddress: VirtualAddress.peripheralPublic)),
            configuration: HostEngineConfiguration(randomAddress: Self.peripheralAddress), clock: clock)
        _ = try await central.perform(.start).get()
        _ = try await peripheral.perform(.start).get()
        _ = try await peripheral.perform(.startAdvertising(.named("State"))).get()
        let events = await central.events()
        _ = try await central.perform(.connect(Self.peripheralAddress, LEConnectionParameters())).get()
        #expect(await central.state(of: Self.peripheralAddress) == .connected(.idle))
        await centralTransport.close()
        var transitions: [String] = []
        for await event in events {
            if case .stateChanged(let peer, let transition, let cause) = event, peer == Self.peripheralAddress {
                transitions.append(cause.map { "\(transition) (\($0))" } ?? "\(transition)")
            }
        }
        #expect(transitions == [
            "Disconnected.Initial --Connect--> Disconnected.Connecting",
            "Disconnected.Connecting --Connected--> Connected.Idle",
            "Connected.Idle --Failure--> Error (transportEnded)",
        ])
        #expect(await central.state(of: Self.peripheralAddress) == .error)
        #expect(await central.failure(of: Self.peripheralAddress) == .transportEnded)
        await peripheral.close()
    }
}
