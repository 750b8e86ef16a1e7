import ArgumentParser
import Bluewire
import Foundation

/// `bluewire l2cap listen --psm P`: the peripheral side. Advertises (connectable, with `--name`),
/// accepts LE credit based channels and enhanced ones (Core Vol 3 Part A §4.22, §4.25) on SPSM P,
/// and echoes every SDU back (`--echo`) or just reports it, until SIGINT/SIGTERM or `--count` SDUs.
struct L2CAPListenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listen",
        abstract: "Advertise and accept credit based channels on an SPSM; print (or echo) every SDU.",
        discussion: """
            One line per event on stdout: `channel 0x0040 opened (peer MTU 512, MPS 100)`, \
            `sdu 0x0040 300 octets 00000000...` (the first 16 octets), `channel 0x0040 closed`. \
            Stops on SIGINT/SIGTERM (status 130) or after --count SDUs (status 0), disconnecting every central.
            """
    )

    @OptionGroup var live: LiveOptions

    @OptionGroup var channelOptions: L2CAPChannelOptions

    @Option(name: .long, help: ArgumentHelp("The name to advertise.", valueName: "name"))
    var name: String = "Bluewire-L2CAP"

    @Flag(name: .long, help: "Send every SDU back on its channel.")
    var echo = false

    @Option(name: .long, help: ArgumentHelp("Stop after this many SDUs.", valueName: "count"))
    var count: Int?

    var spsm: SPSM? { channelOptions.spsm }
    var psm: String { channelOptions.psm }
    var mtu: Int { channelOptions.mtu }
    var mps: Int { channelOptions.mps }

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
    }

    func run() async throws {
        guard let spsm else { throw ValidationError("invalid --psm") }
        let host: EngineHost
        do {
            host = try await live.startEngineHost(connectionTimeout: .seconds(10))
        } catch {
            fail("\(error)")
        }
        let listener = L2CAPListener(host: host)
        let interrupts = CommandInterrupts { Task { await listener.stop(status: 130) } }
        defer { interrupts.cancel() }
        let events = await host.events()
        if case .failure(let error) = await host.perform(.start) {
            await host.close()
            fail("controller bring-up failed: \(error)")
        }
        _ = await host.perform(.clearControllerLeftovers)
        let parameters = CreditBasedChannelParameters(mtu: mtu, mps: mps, initialCredits: 16)
        if case .failure(let error) = await host.perform(.registerServer(spsm: spsm, parameters: parameters, security: .none)) {
            await listener.stop(status: 1, message: "cannot listen on SPSM \(psm): \(error)")
        }
        if case .failure(let error) = await host.perform(.startAdvertising(.named(name))) {
            await listener.stop(status: 1, message: "cannot advertise: \(error)")
        }
        say("listening on SPSM 0x\(hex(spsm.rawValue, width: 4)) as \(name) (\(await host.localAddress))")
        var sdus = 0
        for await event in events {
            switch event {
            case .connected(let connection):
                await listener.connected(connection.handle)
                say("connected \(connection.peer)")
            case .disconnected(let handle, let reason):
                await listener.disconnected(handle)
                say("disconnected 0x\(hex(handle, width: 4)): \(reason)")
            case .channelOpened(let channel):
                say("channel 0x\(hex(channel.cid, width: 4)) opened (peer MTU \(channel.peerMTU), MPS \(channel.peerMPS)\(channel.isEnhanced ? ", enhanced" : ""))")
            case .channelSDU(let connection, let cid, let sdu):
                sdus += 1
                say("sdu 0x\(hex(cid, width: 4)) \(sdu.count) octets \(hexString(sdu.prefix(16)))\(sdu.count > 16 ? "..." : "")")
                if echo { _ = await host.perform(.sendSDU(connection: connection, cid: cid, sdu)) }
            case .channelClosed(_, let cid, let reason):
                say("channel 0x\(hex(cid, width: 4)) closed: \(reason)")
            default:
                break
            }
            if let count, sdus >= count { await listener.stop(status: 0) }
        }
        await listener.stop(status: 1, message: "the controller went away")
    }
}

/// The centrals `l2cap listen` serves, and how it stops: advertising off, every link disconnected.
actor L2CAPListener {
    let host: EngineHost
    var links: Set<UInt16> = []

    init(host: EngineHost) { self.host = host }

    func connected(_ handle: UInt16) { links.insert(handle) }
    func disconnected(_ handle: UInt16) { links.remove(handle) }

    var stopping = false

    /// Stops once: a second caller (the event loop seeing the stream end because the first one
    /// closed the host) waits for the first to exit with its status.
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
        Foundation.exit(status)
    }
}

/// One line on stdout, written at once (unbuffered: a test or a pipe sees each event as it happens).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
