import ArgumentParser
import Bluewire
import Foundation

/// `bluewire l2cap connect ADDR PSM`: netcat over an LE Credit Based channel (Core Vol 3 Part A
/// §4.22, §10.1) to a peripheral's SPSM. See Docs/CommandLine.md.
struct L2CAPConnectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "connect",
        abstract: "Open an LE credit based channel to a peripheral's SPSM: stdin to SDUs, SDUs to stdout.",
        discussion: """
            Connects to the peripheral, opens the channel and then copies standard input to the channel \
            and the channel to standard output, like netcat. Each read of stdin (at most the peer's MTU) \
            becomes one SDU; with --lines each line, newline included, does. Every SDU received is written \
            to stdout as it is (--json: one JSON object per event instead: opened, sdu with the data in \
            hex, closed). Diagnostics go to stderr. End of input closes the channel and disconnects \
            (status 0); the peer closing the channel ends with status 0 too; a refusal, a lost link or \
            any other error with status 1 and the reason by name; SIGINT/SIGTERM disconnects and ends \
            with status 130.
            """
    )

    @Argument(help: ArgumentHelp("The peripheral: AA:BB:CC:DD:EE:FF or AA:BB:CC:DD:EE:FF/random.", valueName: "address"))
    var address: String

    @Argument(help: ArgumentHelp("The SPSM: 0x0080-0x00FF (dynamic) or a SIG one, hex with 0x or decimal.", valueName: "psm"))
    var psm: String

    @OptionGroup var live: LiveOptions

    @OptionGroup var options: L2CAPNetcatOptions

    @Option(name: .customLong("connect-timeout"), help: ArgumentHelp("Seconds to wait for the connection.", valueName: "seconds"))
    var connectTimeout: Double = 10

    func validate() throws {
        _ = try parsePeerAddress(address)
        guard parseSPSM(psm) != nil else { throw ValidationError("invalid PSM \(psm): expected a number such as 0x0080") }
        guard connectTimeout > 0 && connectTimeout <= 3600 else { throw ValidationError("--connect-timeout must be between 0 and 3600 seconds") }
    }

    func run() async throws {
        guard let peer = BluetoothAddress(parsing: address), let spsm = parseSPSM(psm) else { throw ValidationError("invalid arguments") }
        let (host, session, link, interrupts) = await connectWithEngine(live: live, peer: peer, connectTimeout: connectTimeout)
        defer { interrupts.cancel() }
        if options.json { say(JSONLine.make(["event": "connected", "address": "\(peer)"])) }
        let channel: L2CAPChannel
        do {
            channel = try await host.openChannel(
                connection: link.handle, psm: spsm, mtu: options.mtu, mps: options.mps, credits: options.credits)
        } catch {
            await session.finish()
            fail("opening a channel to SPSM 0x\(hex(spsm.rawValue, width: 4)) on \(peer) failed: \(error)")
        }
        L2CAPNetcat.opened(channel, json: options.json)
        let outcome = await L2CAPNetcat.run(channel, options: options)
        await session.finish()
        switch outcome {
        case .closed: Foundation.exit(0)
        case .failed(let error): fail("channel 0x\(hex(channel.cid, width: 4)): \(error)")
        }
    }
}
