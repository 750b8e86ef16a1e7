import ArgumentParser
import Bluewire

/// What `l2cap connect` and `l2cap listen` share: the channel's receive parameters (Core Vol 3 Part
/// A §4.22: MTU 23-65535, MPS 23-65533, initial credits) and how stdin and stdout carry SDUs.
struct L2CAPNetcatOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Our receive MTU: the longest SDU the peer may send (23-65535).", valueName: "octets"))
    var mtu: Int = 512

    @Option(name: .long, help: ArgumentHelp("Our receive MPS: the longest K-frame payload (23-65533).", valueName: "octets"))
    var mps: Int = 247

    @Option(name: .long, help: ArgumentHelp(
        "K-frames the peer may send before we hand SDUs to stdout (credits go back as SDUs are written; raised to one full SDU).",
        valueName: "count"))
    var credits: Int = 16

    @Flag(name: .long, help: "One SDU per line of stdin (newline included; a line longer than the peer's MTU is cut), instead of one per read.")
    var lines = false

    @Flag(name: .long, help: "Events as JSON lines on stdout (SDUs received as hex), instead of the raw SDUs.")
    var json = false

    func validate() throws {
        guard (23...65_535).contains(mtu), (23...65_533).contains(mps) else { throw ValidationError("--mtu 23-65535, --mps 23-65533") }
        guard (1...65_535).contains(credits) else { throw ValidationError("--credits 1-65535") }
    }
}

/// An SPSM argument: hex with 0x (`0x0080`) or decimal (`128`); 0 is not an SPSM.
func parseSPSM(_ text: String) -> SPSM? {
    let lowered = text.lowercased()
    let value = lowered.hasPrefix("0x") ? UInt16(lowered.dropFirst(2), radix: 16) : UInt16(lowered)
    guard let value, value != 0 else { return nil }
    return SPSM(value)
}
