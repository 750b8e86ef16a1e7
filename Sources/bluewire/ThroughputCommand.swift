import ArgumentParser
import Bluewire
import BluewireCore
import BluewireHCI
import Foundation

/// `bluewire throughput ADDR`: connects to a peripheral and measures GATT throughput one way, with a
/// live progress line on stderr and a final report on stdout.
struct ThroughputCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "throughput",
        abstract: "Measure GATT or L2CAP channel throughput to or from a peripheral (notify, write-without-response, write, l2cap).",
        discussion: """
            Connects to ADDR as central, exchanges MTUs (--mtu sets what this side offers), and moves \
            sequence-numbered packets for --duration seconds:
              notify                  subscribe to the characteristic and count its notifications
              write-without-response  write the characteristic with Write Commands, as fast as the \
            controller's buffers take them
              write                   write it with Write Requests, one at a time (latency percentiles)
              l2cap                   open an LE credit based channel to --psm and count the SDUs the \
            peer's source sends (`bluewire serve --throughput --psm P`), as fast as credits allow
            Without --handle the peer must be Bluewire's throughput peer (`bluewire serve --throughput`), \
            whose service B1E3E000-7A55-4C3E-9F1B-2D6C8A4E5F00 is found by discovery; its sink also \
            reports lost and out-of-order writes. Lost and out-of-order notifications come from the \
            sequence number in each packet's first four octets (UInt32, little-endian, from 0).

            Progress (rate, packets, loss) is printed on stderr about once a second. The report gives \
            goodput in kbit/s (ATT value octets only), packets/s, lost and out-of-order packets, and \
            for write the round-trip latency p50/p90/p99.

            With --mode l2cap there is no GATT: --mtu is our receive MTU on the channel (23...65535, \
            default 512; the source sends SDUs of that size, K-frames of at most 247 octets), packets are \
            SDUs, goodput counts SDU octets, and lost/out-of-order come from each SDU's sequence number. \
            --handle, --length and --phy do not apply.

            Example: bluewire throughput C0:11:22:33:44:55/random --mode notify --mtu 247 --duration 5 \
            --transport tcp:127.0.0.1:9000
            """)

    @Argument(help: ArgumentHelp("The peripheral: AA:BB:CC:DD:EE:FF (public) or AA:BB:CC:DD:EE:FF/random.", valueName: "address"))
    var address: String

    @Option(help: ArgumentHelp("Characteristic value handle (0x0003 or 3); default: the throughput peer's.", valueName: "handle"))
    var handle: String?

    @Option(help: ArgumentHelp("notify, write-without-response, write or l2cap.", valueName: "mode"))
    var mode: String = ThroughputMode.notify.rawValue

    @Option(help: ArgumentHelp("ATT MTU to offer in the exchange (23...517; default 517, l2cap: our receive MTU, 23...65535, 512).", valueName: "n"))
    var mtu: Int?

    @Option(help: ArgumentHelp("The SPSM to open for --mode l2cap: 0x0080-0x00FF (dynamic) or a SIG one, hex with 0x or decimal.", valueName: "psm"))
    var psm: String?

    @Option(help: ArgumentHelp("Seconds to measure.", valueName: "seconds"))
    var duration: Double = 10

    @Option(help: ArgumentHelp("Octets per written packet (default: ATT_MTU - 3, at most 512).", valueName: "n"))
    var length: Int?

    @Option(help: ArgumentHelp("Stop after this many packets.", valueName: "n"))
    var packets: Int?

    @Option(help: ArgumentHelp("Ask for this PHY both ways before measuring: 1m, 2m or coded (default: keep the link's).", valueName: "phy"))
    var phy: String?

    @Flag(help: "Print the report as one JSON object.")
    var json = false

    @OptionGroup var live: LiveOptions

    func validate() throws {
        guard BluetoothAddress(parsing: address) != nil else {
            throw ValidationError("invalid address \(address): expected AA:BB:CC:DD:EE:FF or AA:BB:CC:DD:EE:FF/random")
        }
        guard ThroughputMode(rawValue: mode) != nil else {
            throw ValidationError("invalid mode \(mode): expected notify, write-without-response, write or l2cap")
        }
        if mode == ThroughputMode.l2cap.rawValue {
            guard let psm else { throw ValidationError("--mode l2cap needs --psm") }
            guard parseSPSM(psm) != nil else { throw ValidationError("invalid PSM \(psm): expected a number such as 0x0080") }
            for (given, option) in [(handle != nil, "--handle"), (length != nil, "--length"), (phy != nil, "--phy")] where given {
                throw ValidationError("\(option) does not apply to --mode l2cap")
            }
            if let mtu { guard (23...65_535).contains(mtu) else { throw ValidationError("invalid MTU \(mtu): expected 23...65535") } }
        } else {
            if psm != nil { throw ValidationError("--psm is for --mode l2cap") }
            if let mtu { guard (23...517).contains(mtu) else { throw ValidationError("invalid MTU \(mtu): expected 23...517") } }
        }
        if let handle { guard Self.parseHandle(handle) != nil else { throw ValidationError("invalid handle \(handle): expected 0x0001...0xFFFF") } }
        guard duration > 0, duration.isFinite else { throw ValidationError("invalid duration \(duration): expected seconds > 0") }
        if let packets { guard packets > 0 else { throw ValidationError("invalid packet count \(packets)") } }
        if let phy { guard Self.parsePHY(phy) != nil else { throw ValidationError("invalid PHY \(phy): expected 1m, 2m or coded") } }
    }

    static func parsePHY(_ text: String) -> LEPHYSet? {
        switch text.lowercased() {
        case "1m": .le1M
        case "2m": .le2M
        case "coded": .leCoded
        default: nil
        }
    }

    static func parseHandle(_ text: String) -> UInt16? {
        let value = text.lowercased().hasPrefix("0x") ? UInt16(text.dropFirst(2), radix: 16) : UInt16(text)
        return value == 0 ? nil : value
    }

    func run() async throws {
        // validate() has checked these.
        let peer = BluetoothAddress(parsing: address) ?? BluetoothAddress(value: 0, type: .public)
        let mode = ThroughputMode(rawValue: mode) ?? .notify
        if mode == .l2cap, let spsm = psm.flatMap(parseSPSM) { return await runOnChannel(peer: peer, psm: spsm) }
        await runOnEngine(peer: peer, mode: mode)
    }
}
