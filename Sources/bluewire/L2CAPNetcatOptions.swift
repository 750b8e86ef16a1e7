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

    @Flag(name: .customLong("close-on-eof"), help: ArgumentHelp(
        "At end of input, close the channel once everything is sent (as nc -N), instead of reading until the peer closes it."))
    var closeOnEOF = false

    @Option(name: .customLong("quit-after"), help: ArgumentHelp(
        "At end of input, keep printing what arrives for this many seconds, then close the channel and exit (as nc -q).",
        valueName: "seconds"))
    var quitAfter: Double?

    func validate() throws {
        guard (23...65_535).contains(mtu), (23...65_533).contains(mps) else { throw ValidationError("--mtu 23-65535, --mps 23-65533") }
        guard (1...65_535).contains(credits) else { throw ValidationError("--credits 1-65535") }
        if let quitAfter {
            guard quitAfter >= 0 && quitAfter <= 86_400 else { throw ValidationError("--quit-after must be between 0 and 86400 seconds") }
            guard !closeOnEOF else { throw ValidationError("--quit-after and --close-on-eof are two choices for end of input: give one") }
        }
    }

    /// What end of input does: nothing (read until the peer closes), close at once, or close later.
    var atEndOfInput: L2CAPNetcat.EndOfInput {
        if closeOnEOF { return .close(after: .zero) }
        if let quitAfter { return .close(after: .milliseconds(Int64((quitAfter * 1000).rounded()))) }
        return .keepReading
    }
}

/// The SPSM of an `l2cap` subcommand: a positional argument (`l2cap connect ADDR 0x80`,
/// `l2cap listen 0x80`, `l2cap send ADDR 0x80`), or `--psm P` as `l2cap send` took it before.
struct L2CAPPSMArgument: ParsableArguments {
    @Argument(help: ArgumentHelp("The SPSM: 0x0080-0x00FF (dynamic) or a SIG one, hex with 0x or decimal.", valueName: "psm"))
    var positional: String?

    @Option(name: .customLong("psm"), help: ArgumentHelp("The SPSM, as an option (same as the positional <psm>).", valueName: "psm"))
    var option: String?

    /// The text given, whichever way.
    var text: String { positional ?? option ?? "" }

    var spsm: SPSM? { parseSPSM(text) }

    func validate() throws {
        switch (positional, option) {
        case (nil, nil): throw ValidationError("missing the PSM: give it after the address (or as --psm P), e.g. 0x0080")
        case (let given?, let other?) where parseSPSM(given) != parseSPSM(other):
            throw ValidationError("two different PSMs given (\(given) and --psm \(other)): give one")
        default: break
        }
        guard spsm != nil else { throw ValidationError("invalid PSM \(text): expected a number such as 0x0080") }
    }
}

/// An SPSM argument: hex with 0x (`0x0080`) or decimal (`128`); 0 is not an SPSM.
func parseSPSM(_ text: String) -> SPSM? {
    let lowered = text.lowercased()
    let value = lowered.hasPrefix("0x") ? UInt16(lowered.dropFirst(2), radix: 16) : UInt16(lowered)
    guard let value, value != 0 else { return nil }
    return SPSM(value)
}
