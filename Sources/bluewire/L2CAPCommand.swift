import ArgumentParser
import Bluewire
import Foundation

/// `bluewire l2cap`: credit based L2CAP channels (Core Vol 3 Part A §4.22, §10.1) on `EngineHost`.
/// `connect`/`listen` are netcat over a channel (L2CAPConnectCommand, L2CAPListenCommand); `send`
/// opens an LE Credit Based Connection to a peripheral's L2CAP server, sends SDUs as fast as
/// credits allow, optionally checked as the peer echoes them, and reports goodput. See
/// Docs/CommandLine.md.
struct L2CAPCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "l2cap",
        abstract: "Credit based L2CAP channels (LE CoC): netcat-style connect/listen, goodput with send.",
        subcommands: [L2CAPConnectCommand.self, L2CAPListenCommand.self, L2CAPSendCommand.self]
    )
}

struct L2CAPSendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Open an LE credit based channel to a peripheral's SPSM, send SDUs, report goodput.",
        discussion: """
            Each SDU starts with its sequence number (UInt32 little-endian) followed by a counting pattern. \
            With --echo the peer must send every SDU back (as an echo server does); each is checked octet for \
            octet. Exit status 0 when all SDUs went out (and came back intact with --echo), 1 otherwise.
            """
    )

    @Argument(help: ArgumentHelp("The peripheral: AA:BB:CC:DD:EE:FF or AA:BB:CC:DD:EE:FF/random.", valueName: "address"))
    var address: String

    @OptionGroup var psmArgument: L2CAPPSMArgument

    @OptionGroup var live: LiveOptions

    @OptionGroup var channelOptions: L2CAPChannelOptions

    @Option(name: .long, help: ArgumentHelp("SDUs to send.", valueName: "count"))
    var count: Int = 100

    @Option(name: .long, help: ArgumentHelp("Octets per SDU (4 or more; at most the peer's MTU).", valueName: "octets"))
    var length: Int = 512

    @Flag(name: .long, help: "Expect every SDU back and check it.")
    var echo = false

    @Flag(name: .long, help: "Print the report as one JSON object.")
    var json = false

    @Option(name: .customLong("connect-timeout"), help: ArgumentHelp("Seconds to wait for the connection.", valueName: "seconds"))
    var connectTimeout: Double = 10

    var spsm: SPSM? { psmArgument.spsm }
    var psm: String { psmArgument.text }
    var mtu: Int { channelOptions.mtu }
    var mps: Int { channelOptions.mps }

    func validate() throws {
        _ = try parsePeerAddress(address)
        guard count > 0 && count <= 1_000_000 else { throw ValidationError("--count must be between 1 and 1000000") }
        guard length >= 4 && length <= 65_535 else { throw ValidationError("--length must be between 4 and 65535") }
        guard connectTimeout > 0 && connectTimeout <= 3600 else { throw ValidationError("--connect-timeout must be between 0 and 3600 seconds") }
    }

    /// SDU `index`: the sequence number, then a counting pattern.
    static func sdu(_ index: Int, length: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: length)
        let sequence = UInt32(truncatingIfNeeded: index)
        for i in 0..<4 { bytes[i] = UInt8(truncatingIfNeeded: sequence >> (8 * UInt32(i))) }
        for i in 4..<length { bytes[i] = UInt8(truncatingIfNeeded: i &+ index) }
        return bytes
    }

    func run() async throws {
        guard let peer = BluetoothAddress(parsing: address), let spsm else { throw ValidationError("invalid arguments") }
        let echoes = EchoCollector()
        let (host, session, link, interrupts) = await connectWithEngine(live: live, peer: peer, connectTimeout: connectTimeout) { host in
            let events = await host.events()
            await echoes.listen(events)
        }
        defer { interrupts.cancel() }
        let parameters = CreditBasedChannelParameters(mtu: max(mtu, echo ? length : 23), mps: mps, initialCredits: 16)
        let channel: HostChannel
        switch await host.perform(.openChannel(connection: link.handle, spsm: spsm, parameters: parameters)) {
        case .success(.channelOpened(let opened)): channel = opened
        case .success(let other):
            await session.finish()
            fail("opening a channel to SPSM \(psm): unexpected \(other)")
        case .failure(let error):
            await session.finish()
            fail("opening a channel to SPSM \(psm) on \(peer) failed: \(Self.describe(error))")
        }
        guard length <= channel.peerMTU else {
            await session.finish()
            fail("--length \(length) exceeds the peer's MTU \(channel.peerMTU)")
        }
        await echoes.expect(cid: channel.cid)
        let started = ContinuousClock.now
        for index in 0..<count {
            if case .failure(let error) = await host.perform(.sendSDU(connection: link.handle, cid: channel.cid, Self.sdu(index, length: length))) {
                await session.finish()
                fail("SDU \(index) not sent: \(error)")
            }
        }
        let sent = ContinuousClock.now - started
        var received = 0, intact = 0
        if echo {
            (received, intact) = await echoes.wait(for: count, length: length, timeout: .seconds(30))
        }
        let total = ContinuousClock.now - started
        _ = await host.perform(.closeChannel(connection: link.handle, cid: channel.cid))
        await session.finish()
        let report = L2CAPSendReport(
            count: count, length: length, peerMTU: channel.peerMTU, peerMPS: channel.peerMPS,
            sendSeconds: Self.seconds(sent), echo: echo ? (received, intact, Self.seconds(total)) : nil)
        print(json ? report.json : report.text)
        if echo && intact != count { Foundation.exit(1) }
    }

    static func describe(_ error: HostEngineError) -> String {
        guard case .channelRefused(let failure) = error else { return PairOutput.describe(error) }
        if case .refused(let result) = failure { return "\(result)" }
        return "\(failure)"
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// The SDUs the peer sent back on the channel, checked against what was sent.
actor EchoCollector {
    var cid: UInt16?
    var sdus: [[UInt8]] = []
    var early: [(UInt16, [UInt8])] = []
    var waiter: (count: Int, continuation: CheckedContinuation<Void, Never>)?
    var task: Task<Void, Never>?

    func listen(_ events: AsyncStream<HostEngineEvent>) {
        task = Task {
            for await event in events {
                if case .channelSDU(_, let cid, let sdu) = event { self.received(cid, sdu) }
            }
        }
    }

    func expect(cid: UInt16) {
        self.cid = cid
        for (channel, sdu) in early where channel == cid { sdus.append(sdu) }
        early.removeAll()
    }

    func received(_ channel: UInt16, _ sdu: [UInt8]) {
        guard let cid else { return early.append((channel, sdu)) }
        guard channel == cid else { return }
        sdus.append(sdu)
        if let waiter, sdus.count >= waiter.count {
            self.waiter = nil
            waiter.continuation.resume()
        }
    }

    /// Waits for `count` echoes (or the timeout); how many came back, and how many intact, in order.
    func wait(for count: Int, length: Int, timeout: Duration) async -> (received: Int, intact: Int) {
        if sdus.count < count {
            let timer = Task { [weak self] in
                try? await Task.sleep(for: timeout)
                await self?.timedOut()
            }
            await withCheckedContinuation { continuation in waiter = (count, continuation) }
            timer.cancel()
        }
        let intact = sdus.prefix(count).enumerated().filter { $0.element == L2CAPSendCommand.sdu($0.offset, length: length) }.count
        return (sdus.count, intact)
    }

    func timedOut() {
        guard let waiter else { return }
        self.waiter = nil
        waiter.continuation.resume()
    }
}

/// What `l2cap send` prints.
struct L2CAPSendReport {
    var count: Int
    var length: Int
    var peerMTU: Int
    var peerMPS: Int
    var sendSeconds: Double
    /// Echoes received, intact, and the seconds until the last one.
    var echo: (received: Int, intact: Int, seconds: Double)?

    var kilobitsPerSecond: Double { sendSeconds > 0 ? Double(count * length * 8) / sendSeconds / 1000 : 0 }

    var text: String {
        var lines = [
            "channel: peer MTU \(peerMTU), MPS \(peerMPS)",
            "sent \(count) SDUs of \(length) octets (\(count * length) octets) in \(String(format: "%.3f", sendSeconds)) s: "
                + "\(String(format: "%.1f", kilobitsPerSecond)) kbit/s",
        ]
        if let echo {
            lines.append("echoed \(echo.received)/\(count), \(echo.intact) intact, last after \(String(format: "%.3f", echo.seconds)) s")
        }
        return lines.joined(separator: "\n")
    }

    var json: String {
        var object: [String: any Sendable] = [
            "sdus": count, "sdu_length": length, "peer_mtu": peerMTU, "peer_mps": peerMPS,
            "send_seconds": (sendSeconds * 1000).rounded() / 1000, "kilobits_per_second": (kilobitsPerSecond * 10).rounded() / 10,
        ]
        if let echo { object["echo"] = ["received": echo.received, "intact": echo.intact] as [String: any Sendable] }
        return JSONLine.make(object)
    }
}
