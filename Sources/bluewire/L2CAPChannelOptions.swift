import ArgumentParser
import Bluewire

/// The channel options of `l2cap send`: our receive MTU and MPS (Core Vol 3 Part A §4.22: MTU
/// 23-65535, MPS 23-65533).
struct L2CAPChannelOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Our receive MTU (23-65535).", valueName: "octets"))
    var mtu: Int = 512

    @Option(name: .long, help: ArgumentHelp("Our receive MPS (23-65533).", valueName: "octets"))
    var mps: Int = 247

    func validate() throws {
        guard (23...65_535).contains(mtu), (23...65_533).contains(mps) else { throw ValidationError("--mtu 23-65535, --mps 23-65533") }
    }
}

/// A peer address argument: AA:BB:CC:DD:EE:FF (public) or AA:BB:CC:DD:EE:FF/random.
func parsePeerAddress(_ text: String) throws -> BluetoothAddress {
    guard let parsed = BluetoothAddress(parsing: text) else {
        throw ValidationError("invalid address \(text): expected AA:BB:CC:DD:EE:FF or AA:BB:CC:DD:EE:FF/random")
    }
    return parsed
}
