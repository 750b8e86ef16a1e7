import BluewireCore
import BluewireHCI
import BluewireHostEngine
import BluewireL2CAP
import HostTestSupport
import Testing

/// Credit based channels through the engine (Core Vol 3 Part A §4.22–4.28, §10.1): two engines on a
/// virtual link (`LinkedEngines`), everything deterministic.
@Suite("Host engine: credit based channels")
struct EngineChannelTests {
    static let psm = SPSM(0x0080)
    static let link = LinkedEngines.firstHandle

    static func pattern(_ count: Int, seed: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ seed) } }

    @Test("LE CoC: open to a registered SPSM, SDUs larger than MPS wait for credits and arrive intact both ways, close")
    func leCreditBasedEcho() throws {
        var pair = try LinkedEngines()
        let register = pair.peripheral.perform(.registerServer(
            spsm: Self.psm, parameters: CreditBasedChannelParameters(mtu: 512, mps: 100, initialCredits: 2), security: .none))
        #expect(pair.peripheral.result(register) == .success(.done))

        let open = pair.central.perform(.openChannel(
            connection: Self.link, spsm: Self.psm, parameters: CreditBasedChannelParameters(mtu: 600, mps: 64, initialCredits: 10)))
        pair.pump()
        let channel = try #require(pair.central.openedChannel(open), "\(String(describing: pair.central.result(open)))")
        // Credits raised to one whole SDU: ⌈(512 + 2) / 100⌉ = 6.
        #expect(channel.peerMTU == 512 && channel.peerMPS == 100 && channel.peerCredits == 6)
        #expect(channel.mtu == 600 && channel.mps == 64 && !channel.isEnhanced && channel.initiatedLocally)
        let served = try #require(pair.peripheral.incomingChannels.first)
        #expect(served.psm == Self.psm && served.peerMTU == 600 && served.peerMPS == 64 && served.peerCredits == 10)
        #expect(served.remoteCID == channel.cid && channel.remoteCID == served.cid)

        // Three 400-octet SDUs: 5 K-frames each (2 + 400 octets in 100-octet K-frames), 15 frames for
        // 6 credits: the first goes, the second in part, the rest waits until the peer returns credits.
        let sdus = (0..<3).map { Self.pattern(400, seed: $0) }
        let sends = sdus.map { pair.central.perform(.sendSDU(connection: Self.link, cid: channel.cid, $0)) }
        let backlog = try #require(pair.central.engine.channelBacklog(connection: Self.link, cid: channel.cid))
        #expect(backlog.sendCredits == 0)
        #expect(backlog.queuedSDUs == 2)
        #expect(pair.central.result(sends[0]) == .success(.done))
        #expect(pair.central.result(sends[1]) == nil && pair.central.result(sends[2]) == nil)
        pair.pump()
        #expect(pair.peripheral.takeSDUs(cid: served.cid) == sdus)
        #expect(sends.allSatisfy { pair.central.result($0) == .success(.done) })
        #expect(pair.central.events.contains { if case .channelCredits(_, channel.cid, _) = $0 { return true }; return false })
        #expect(pair.central.engine.channelBacklog(connection: Self.link, cid: channel.cid)?.queuedSDUs == 0)

        // The echo: the same SDUs back, now cut at the central's MPS of 64.
        for sdu in sdus { pair.peripheral.perform(.sendSDU(connection: Self.link, cid: served.cid, sdu)) }
        pair.pump()
        #expect(pair.central.takeSDUs(cid: channel.cid) == sdus)

        // Too large for the peer's MTU: refused at once.
        let tooLong = pair.central.perform(.sendSDU(connection: Self.link, cid: channel.cid, Self.pattern(513, seed: 9)))
        #expect(pair.central.result(tooLong) == .failure(.channel(.sduExceedsMTU(length: 513, mtu: 512))))

        let close = pair.central.perform(.closeChannel(connection: Self.link, cid: channel.cid))
        pair.pump()
        #expect(pair.central.result(close) == .success(.done))
        #expect(pair.central.events.contains(.channelClosed(connection: Self.link, cid: channel.cid, reason: .local)))
        #expect(pair.peripheral.events.contains(.channelClosed(connection: Self.link, cid: served.cid, reason: .remote)))
        #expect(pair.central.engine.channelIDs(connection: Self.link).isEmpty)
        #expect(pair.peripheral.engine.channelIDs(connection: Self.link).isEmpty)
    }

    @Test("ECFC: three enhanced channels in one request, each carries its own SDUs; an unknown SPSM is refused")
    func enhancedChannels() throws {
        var pair = try LinkedEngines()
        pair.peripheral.perform(.registerServer(spsm: Self.psm, parameters: CreditBasedChannelParameters(), security: .none))
        let open = pair.central.perform(.openEnhancedChannels(
            connection: Self.link, spsm: Self.psm, count: 3, parameters: CreditBasedChannelParameters(mtu: 300, mps: 80, initialCredits: 8)))
        pair.pump()
        guard case .success(.channelsOpened(let channels))? = pair.central.result(open) else {
            Issue.record("open: \(String(describing: pair.central.result(open)))")
            return
        }
        #expect(channels.count == 3)
        #expect(channels.allSatisfy { $0.isEnhanced && $0.peerMTU == 512 && $0.peerMPS == 247 })
        let served = pair.peripheral.incomingChannels
        #expect(served.count == 3)
        for (index, channel) in channels.enumerated() {
            pair.central.perform(.sendSDU(connection: Self.link, cid: channel.cid, Self.pattern(500, seed: index)))
        }
        pair.pump()
        for (index, channel) in channels.enumerated() {
            let peer = try #require(served.first { $0.cid == channel.remoteCID })
            #expect(pair.peripheral.takeSDUs(cid: peer.cid) == [Self.pattern(500, seed: index)])
        }

        let refused = pair.central.perform(.openEnhancedChannels(
            connection: Self.link, spsm: SPSM(0x0090), count: 2, parameters: CreditBasedChannelParameters()))
        let refusedLE = pair.central.perform(.openChannel(connection: Self.link, spsm: SPSM(0x0091), parameters: CreditBasedChannelParameters()))
        pair.pump()
        #expect(pair.central.result(refused) == .failure(.channelRefused(.refusedEnhanced(.allRefusedSPSMNotSupported))))
        #expect(pair.central.result(refusedLE) == .failure(.channelRefused(.refused(.spsmNotSupported))))
        let tooMany = pair.central.perform(.openEnhancedChannels(
            connection: Self.link, spsm: Self.psm, count: 6, parameters: CreditBasedChannelParameters()))
        #expect(pair.central.result(tooMany) == .failure(.channel(.invalidChannelCount(6))))
    }

    @Test("RTX: an unanswered connection request fails after the signaling timeout, through nextDeadline")
    func signalingTimeout() throws {
        var pair = try LinkedEngines()
        let open = pair.central.perform(.openChannel(connection: Self.link, spsm: Self.psm, parameters: CreditBasedChannelParameters()))
        _ = pair.central.takeWritten()  // lost on the air
        let deadline = try #require(pair.central.engine.nextDeadline)
        #expect(deadline == pair.central.now + .seconds(2))
        pair.central.advance(by: .milliseconds(1999))
        #expect(pair.central.result(open) == nil)
        pair.central.advance(by: .milliseconds(1))
        #expect(pair.central.result(open) == .failure(.channelRefused(.timeout)))
        #expect(pair.central.engine.channelIDs(connection: Self.link).isEmpty)
    }

    @Test("the link going down closes every channel and fails the SDUs still waiting for credits")
    func linkLoss() throws {
        var pair = try LinkedEngines()
        pair.peripheral.perform(.registerServer(
            spsm: Self.psm, parameters: CreditBasedChannelParameters(mtu: 100, mps: 50, initialCredits: 3), security: .none))
        let open = pair.central.perform(.openChannel(connection: Self.link, spsm: Self.psm, parameters: CreditBasedChannelParameters()))
        pair.pump()
        let channel = try #require(pair.central.openedChannel(open))
        let first = pair.central.perform(.sendSDU(connection: Self.link, cid: channel.cid, Self.pattern(100, seed: 1)))
        let second = pair.central.perform(.sendSDU(connection: Self.link, cid: channel.cid, Self.pattern(100, seed: 2)))
        // 3 K-frames for 3 credits: the first SDU is out, the second waits for credits.
        #expect(pair.central.result(first) == .success(.done))
        #expect(pair.central.result(second) == nil)
        pair.central.controller(ControllerBytes.disconnectionComplete(handle: Self.link, reason: 0x08))
        #expect(pair.central.result(second) == .failure(.channelClosed(.linkClosed)))
        #expect(pair.central.events.contains(.channelClosed(connection: Self.link, cid: channel.cid, reason: .linkClosed)))
        let late = pair.central.perform(.sendSDU(connection: Self.link, cid: channel.cid, [1]))
        #expect(pair.central.result(late) == .failure(.unknownConnection(Self.link)))
    }

    @Test("a K-frame longer than our MPS is a flow control violation: the engine closes the channel (§3.4.3, §10.1)")
    func flowViolation() throws {
        var pair = try LinkedEngines()
        pair.peripheral.perform(.registerServer(spsm: Self.psm, parameters: CreditBasedChannelParameters(), security: .none))
        let open = pair.central.perform(.openChannel(
            connection: Self.link, spsm: Self.psm, parameters: CreditBasedChannelParameters(mtu: 100, mps: 30, initialCredits: 5)))
        pair.pump()
        let channel = try #require(pair.central.openedChannel(open))
        // A first K-frame: SDU Length 40, then 38 octets: 40 octets of payload for an MPS of 30.
        pair.central.controller(ControllerBytes.l2cap(handle: Self.link, channel: channel.cid, [40, 0] + Self.pattern(38, seed: 0)))
        pair.pump()
        let violation = CreditBasedDisconnectReason.violation(.kFrameLongerThanMPS(length: 40, mps: 30))
        #expect(pair.central.events.contains(.channelClosed(connection: Self.link, cid: channel.cid, reason: violation)))
        #expect(pair.central.takeSDUs(cid: channel.cid).isEmpty)
        #expect(pair.peripheral.events.contains { if case .channelClosed(_, _, .remote) = $0 { return true }; return false })
    }

    @Test("EATT: GATT client procedures on two enhanced bearers at once, answered by the peer's GATT server")
    func enhancedATT() throws {
        var pair = try LinkedEngines()
        pair.peripheral.engine.setDatabase(try TestDatabase.make())
        pair.peripheral.perform(.registerServer(
            spsm: .eatt, parameters: CreditBasedChannelParameters(mtu: 128, mps: 128, initialCredits: 4), security: .none))
        let open = pair.central.perform(.openEnhancedChannels(
            connection: Self.link, spsm: .eatt, count: 2, parameters: CreditBasedChannelParameters(mtu: 64, mps: 64, initialCredits: 4)))
        pair.pump()
        guard case .success(.channelsOpened(let bearers))? = pair.central.result(open), bearers.count == 2 else {
            Issue.record("open: \(String(describing: pair.central.result(open)))")
            return
        }
        let (first, second) = (bearers[0].cid, bearers[1].cid)
        // The test's database: handles known without a discovery (which this test runs last, on a bearer).
        pair.central.perform(.gatt(connection: Self.link, .cachedDiscovery))
        // One transaction per bearer (Part F §3.3.2): both requests go out before either answer.
        let short = pair.central.perform(.gattOnEATT(connection: Self.link, cid: first, .read(handle: TestDatabase.valueHandle)))
        let cut = pair.central.perform(.gattOnEATT(connection: Self.link, cid: second, .read(handle: TestDatabase.longHandle)))
        let long = pair.central.perform(.gattOnEATT(connection: Self.link, cid: second, .readLong(handle: TestDatabase.longHandle)))
        let mtu = pair.central.perform(.gattOnEATT(connection: Self.link, cid: first, .exchangeMTU))
        let write = pair.central.perform(.gattOnEATT(connection: Self.link, cid: first, .write(handle: TestDatabase.valueHandle, value: [7])))
        let discover = pair.central.perform(.gattOnEATT(connection: Self.link, cid: first, .discoverAll))
        #expect(pair.central.written.filter { $0.type == .acl }.count >= 2)
        pair.pump()
        #expect(pair.central.result(short) == .success(.value([0x2A])))
        // ATT_MTU of a bearer: the smaller channel MTU, 64 (Part G §5.3.1); a Read returns 63 octets.
        #expect(pair.central.result(cut) == .success(.value(Array(TestDatabase.longValue.prefix(63)))))
        #expect(pair.central.result(long) == .success(.value(TestDatabase.longValue)))
        #expect(pair.central.result(mtu) == .success(.mtu(64)))
        #expect(pair.central.result(write) == .success(.done))
        #expect(pair.peripheral.events.contains(.server(.valueWritten(connection: Self.link, handle: TestDatabase.valueHandle, value: [7]))))
        guard case .success(.services(let services))? = pair.central.result(discover) else {
            Issue.record("discover: \(String(describing: pair.central.result(discover)))")
            return
        }
        #expect(services.map(\.service.uuid).contains(TestDatabase.service))
        // The unenhanced bearer's MTU is untouched.
        #expect(pair.peripheral.engine.mtu(connection: Self.link) == 23)

        let unknown = pair.central.perform(.gattOnEATT(connection: Self.link, cid: 0x0070, .read(handle: 3)))
        #expect(pair.central.result(unknown) == .failure(.channel(.unknownChannel(0x0070))))
        // An operation in flight when the link goes down fails with the channel.
        let lost = pair.central.perform(.gattOnEATT(connection: Self.link, cid: first, .read(handle: 3)))
        pair.central.controller(ControllerBytes.disconnectionComplete(handle: Self.link, reason: 0x08))
        #expect(pair.central.result(lost) == .failure(.channelClosed(.linkClosed)))
    }
}
