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
            hex, closed). Diagnostics go to stderr. As with netcat, end of input sends everything read \
            and then keeps printing what arrives until the peer closes the channel (status 0); \
            --close-on-eof closes the channel instead once everything is sent (as nc -N), --quit-after \
            S closes it S seconds after end of input (as nc -q S). A close by us is orderly: the \
            Disconnection Request follows the last K-frame, so the peer gets every octet. A refusal, a \
            lost link, an SDU that could not be sent or any other error ends with status 1 and the \
            reason by name; SIGINT/SIGTERM disconnects and ends with status 130.

            Security: the bonds of the --keys file go to the host before connecting, and a peripheral \
            the file holds a bond with is encrypted with it before the channel opens (no pairing). A \
            channel refused for security (Insufficient Authentication 0x0005, Encryption Key Size Too \
            Short 0x0007 or Insufficient Encryption 0x0008) makes the command pair with the pairing \
            options, as `pair` does, and ask once more; a new bond is saved to the file. Stdin carries \
            the channel: a passkey the peripheral shows is given with --passkey, a comparison accepted \
            with --yes (without them those pairings are refused).
            """
    )

    @Argument(help: ArgumentHelp("The peripheral: AA:BB:CC:DD:EE:FF or AA:BB:CC:DD:EE:FF/random.", valueName: "address"))
    var address: String

    @OptionGroup var psm: L2CAPPSMArgument

    @OptionGroup var live: LiveOptions

    @OptionGroup var options: L2CAPNetcatOptions

    @OptionGroup var security: L2CAPSecurityOptions

    @Option(name: .customLong("connect-timeout"), help: ArgumentHelp("Seconds to wait for the connection.", valueName: "seconds"))
    var connectTimeout: Double = 10

    func validate() throws {
        _ = try parsePeerAddress(address)
        guard connectTimeout > 0 && connectTimeout <= 3600 else { throw ValidationError("--connect-timeout must be between 0 and 3600 seconds") }
    }

    func run() async throws {
        guard let peer = BluetoothAddress(parsing: address), let spsm = psm.spsm else { throw ValidationError("invalid arguments") }
        var live = self.live
        let identity = security.identity(live: &live)
        let stored = identity.bonds
        let security = self.security
        let (host, session, link, interrupts) = await connectWithEngine(live: live, peer: peer, connectTimeout: connectTimeout) { host in
            await security.configure(host, bonds: stored, peerRole: "the peripheral")
        }
        defer { interrupts.cancel() }
        if options.json { say(JSONLine.make(["event": "connected", "address": "\(peer)"])) }
        let linkSecurity = L2CAPLinkSecurity(host: host, session: session, link: link, identity: identity, json: options.json)
        // Bonded already: encrypted with the stored key before the channel is asked for (Core Vol 3
        // Part H §2.4.4), so a peripheral that requires security accepts it at once.
        if identity.hasBond(for: link) { await linkSecurity.encryptWithBond() }
        let channel: L2CAPChannel
        do throws(L2CAPChannelError) {
            channel = try await host.openChannel(
                connection: link.handle, psm: spsm, mtu: options.mtu, mps: options.mps, credits: options.credits)
        } catch {
            let refusal = "the channel to SPSM 0x\(hex(spsm.rawValue, width: 4)) on \(peer) was \(error)"
            guard case .refused(let failure) = error, failure.isForSecurity else {
                await session.finish()
                fail(refusal)
            }
            // Refused for the link's security (§4.23): pair as `pair` does, then ask once more.
            await linkSecurity.pair(after: refusal)
            do throws(L2CAPChannelError) {
                channel = try await host.openChannel(
                    connection: link.handle, psm: spsm, mtu: options.mtu, mps: options.mps, credits: options.credits)
            } catch {
                await session.finish()
                fail("opening a channel to SPSM 0x\(hex(spsm.rawValue, width: 4)) on \(peer) after pairing failed: \(error)")
            }
        }
        L2CAPNetcat.opened(channel, json: options.json)
        let outcome = await L2CAPNetcat.run(channel, options: options)
        await session.finish()
        // A pairing the peripheral asked for (a Security Request) left a bond too.
        await identity.saveNewBond(from: host, peer: link.peer)
        switch outcome {
        case .closed: Foundation.exit(0)
        case .failed(let error): fail("channel 0x\(hex(channel.cid, width: 4)): \(error)")
        }
    }
}
