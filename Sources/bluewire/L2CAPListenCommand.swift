import ArgumentParser
import Bluewire
import Foundation

/// `bluewire l2cap listen PSM`: the peripheral side of `l2cap connect`. Advertises (connectable,
/// `--name`), accepts the first LE credit based channel (Core Vol 3 Part A §4.22, §4.25) a central
/// opens to PSM and runs it like netcat (or `--echo`s every SDU), then stops.
struct L2CAPListenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listen",
        abstract: "Advertise, accept one credit based channel on an SPSM: stdin to SDUs, SDUs to stdout.",
        discussion: """
            Advertises NAME and waits for a central to connect and open a channel to PSM; the first channel \
            is accepted, advertising stops and later requests are refused (SPSM not supported); an enhanced \
            request for several channels gets one, the others refused with "Some connections refused – \
            insufficient resources available". Then stdin \
            goes to the channel and the channel to stdout exactly as with `l2cap connect` (--lines, --json, \
            and at end of input --close-on-eof or --quit-after S; by default the channel stays open until \
            the central closes it); with --echo every SDU received is also sent back and stdin is not read. \
            Ends when the channel closes (status 0: by the central, or by us), on an error (status 1, the \
            reason by name) or on SIGINT/SIGTERM (status 130), with advertising off and every central \
            disconnected.

            Security: the bonds of the --keys file go to the host at start (a bonded central encrypts \
            without pairing) and, without --own-address, the file's local address is used again (centrals \
            find their keys by it). A central that pairs does so as the pairing options say (--passkey, \
            --yes answer its prompts: stdin carries the channel); a new bond is saved to the file.

            --db FILE also serves a GATT database (the JSON forms `serve --db` takes) to the central, with \
            its permissions checked against the link: a central may pair for a protected value and open \
            the channel on the same connection.
            """
    )

    @OptionGroup var psm: L2CAPPSMArgument

    @OptionGroup var live: LiveOptions

    @OptionGroup var options: L2CAPNetcatOptions

    @OptionGroup var security: L2CAPSecurityOptions

    @Option(name: .long, help: ArgumentHelp("The name to advertise.", valueName: "name"))
    var name: String = "Bluewire-L2CAP"

    @Flag(name: .long, help: "Send every SDU received back on the channel (stdin is not read).")
    var echo = false

    @Option(name: .long, help: ArgumentHelp("Also serve this GATT database (JSON attribute table or services form).", valueName: "file"))
    var db: String?

    func run() async throws {
        guard let spsm = psm.spsm else { throw ValidationError("invalid PSM") }
        // The database is checked before the controller is touched.
        let database = db.map(ServeCommand.loadDatabase)
        var live = self.live
        let identity = security.identity(live: &live)
        let host: EngineHost
        do {
            host = try await live.startEngineHost(connectionTimeout: .seconds(10))
        } catch {
            fail("\(error)")
        }
        await security.configure(host, bonds: identity.bonds, peerRole: "the central")
        if let database { await host.setDatabase(database) }
        let session = L2CAPListenSession(host: host)
        let interrupts = CommandInterrupts { Task { await session.stop(status: 130) } }
        defer { interrupts.cancel() }
        let events = await host.events()
        let json = options.json
        let watcher = Task {
            var peers: [UInt16: BluetoothAddress] = [:]
            for await event in events {
                switch event {
                case .connected(let connection):
                    peers[connection.handle] = connection.peer
                    await session.connected(connection.handle)
                    if json { say(JSONLine.make(["event": "connected", "address": "\(connection.peer)"])) } else { note("connected \(connection.peer)") }
                case .disconnected(let handle, let reason):
                    await session.disconnected(handle)
                    if json { say(JSONLine.make(["event": "disconnected", "reason": "\(reason)"])) } else { note("disconnected: \(reason)") }
                case .encryptionChanged(_, let level, _):
                    if json {
                        say(JSONLine.make(["event": "encrypted", "level": Int(level.rawValue), "level_name": PairOutput.levelName(level)]))
                    } else {
                        note("encrypted: \(PairOutput.levelName(level))")
                    }
                case .paired(let handle, _, let bonded, _):
                    if json { say(JSONLine.make(["event": "paired", "bonded": bonded])) } else { note("paired" + (bonded ? ", bonded" : "")) }
                    if bonded, let peer = peers[handle] { await identity.saveNewBond(from: host, peer: peer) }
                case .pairingFailed(_, let failure):
                    if json { say(JSONLine.make(["event": "pairing_failed", "reason": "\(failure)"])) } else { note("pairing failed: \(failure)") }
                default:
                    break
                }
            }
        }
        defer { watcher.cancel() }
        await host.bringUpForCommand()
        let listener: L2CAPChannelListener
        do {
            // One channel per link, as the one channel served: an enhanced request for five gets one,
            // the other four refused (insufficient resources) rather than accepted and never read.
            listener = try await host.listen(
                psm: spsm, mtu: options.mtu, mps: options.mps, credits: options.credits, maximumChannels: 1)
        } catch {
            await session.stop(status: 1, message: "cannot listen on SPSM 0x\(hex(spsm.rawValue, width: 4)): \(error)")
        }
        if case .failure(let error) = await host.perform(.startAdvertising(.named(name))) {
            await session.stop(status: 1, message: "cannot advertise: \(error)")
        }
        let address = await host.localAddress
        if json {
            say(JSONLine.make(["event": "listening", "psm": Int(spsm.rawValue), "name": name, "address": "\(address)"]))
        } else {
            note("listening on SPSM 0x\(hex(spsm.rawValue, width: 4)) as \(name) (\(address))")
        }
        var channels = listener.makeAsyncIterator()
        guard let channel = await channels.next() else {
            await session.stop(status: 1, message: "the controller went away")
        }
        // One channel, as netcat takes one connection: later requests are refused.
        await listener.stop()
        _ = await host.perform(.stopAdvertising)
        L2CAPNetcat.opened(channel, json: json)
        switch await L2CAPNetcat.run(channel, options: options, echo: echo) {
        case .closed: await session.stop(status: 0)
        case .failed(let error): await session.stop(status: 1, message: "channel 0x\(hex(channel.cid, width: 4)): \(error)")
        }
    }
}

/// The centrals `l2cap listen` serves, and how it stops: advertising off, every link
/// disconnected, the host closed.
actor L2CAPListenSession {
    let host: EngineHost
    var links: Set<UInt16> = []
    var stopping = false

    init(host: EngineHost) { self.host = host }

    func connected(_ handle: UInt16) { links.insert(handle) }
    func disconnected(_ handle: UInt16) { links.remove(handle) }

    /// Stops once: a second caller (SIGINT while stopping) waits for the first to exit.
    func stop(status: Int32, message: String? = nil) async -> Never {
        if stopping {
            while true { try? await Task.sleep(for: .seconds(3600)) }
        }
        stopping = true
        _ = await host.perform(.stopAdvertising)
        for handle in links.sorted() {
            _ = await host.perform(.disconnect(handle: handle, reason: .remoteUserTerminatedConnection))
        }
        await host.close()
        if let message { fail(message) }
        ProcessExit.exit(status)
    }
}

/// One line on stdout, written at once (unbuffered: a test or a pipe sees each event as it happens).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
