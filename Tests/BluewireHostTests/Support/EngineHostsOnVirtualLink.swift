import Bluewire
import BluewireCore
import BluewireTesting

/// A central and a peripheral `EngineHost` on one immediate-timing virtual link, on one test clock,
/// each with its own static random address: the set-up the engine host's two-sided tests share.
struct EngineHostsOnVirtualLink {
    let clock = TestClock()
    let link: VirtualLink
    let central: EngineHost
    let peripheral: EngineHost

    init(central centralAddress: BluetoothAddress, peripheral peripheralAddress: BluetoothAddress) {
        link = VirtualLink(clock: clock, timing: .immediate)
        central = EngineHost(
            transport: VirtualTransport(controller: link.addController(publicAddress: VirtualAddress.centralPublic)),
            configuration: HostEngineConfiguration(randomAddress: centralAddress), clock: clock)
        peripheral = EngineHost(
            transport: VirtualTransport(controller: link.addController(publicAddress: VirtualAddress.peripheralPublic)),
            configuration: HostEngineConfiguration(randomAddress: peripheralAddress), clock: clock)
    }
}
