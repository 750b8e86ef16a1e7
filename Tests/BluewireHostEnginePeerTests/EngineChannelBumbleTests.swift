import BluewireCore
import BluewireHCI
import BluewireHostEngine
import BluewireL2CAP
import Foundation
import HostTestSupport
import PeerTestSupport
import Testing

/// Credit based channels between the engine and bumble's L2CAP (Tests/Peers/bumble_coc.py), over
/// bumble controllers on one virtual link: LE CoC both ways, ECFC and EATT reads.
@Suite("Host engine: credit based channels with bumble")
struct EngineChannelBumbleTests {
    static func pattern(_ count: Int, seed: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ seed) } }
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// The SDUs the engine received on `cid`, in order.
    static func sdus(_ runner: SocketEngineRunner, cid: UInt16) -> [[UInt8]] {
        runner.events.compactMap { if case .channelSDU(_, cid, let sdu) = $0 { return sdu }; return nil }
    }

    /// Runs the engine until bumble has reported `count` SDUs (a separate function: the Swift 6.3
    /// compiler's SendNonSendable pass crashes on this closure inside the test's peer closure).
    static func waitForSDUEvents(_ runner: SocketEngineRunner, _ log: PeerEventLog, count: Int) -> Bool {
        runner.run(seconds: 5) { _ in log.all.filter { $0["sdu"] != nil }.count >= count }
    }

    static func started(_ runner: SocketEngineRunner) -> Bool {
        runner.perform(.start, id: 1)
        runner.run(seconds: 10) { $0.result(1) != nil }
        guard case .success(.started)? = runner.result(1) else {
            Issue.record("bring-up: \(String(describing: runner.result(1)))")
            return false
        }
        return true
    }

    @Test("engine central opens an LE CoC to a bumble L2CAP server: SDUs above MPS echo back intact, goodput, close")
    func centralToBumbleServer() async throws {
        let address = BluetoothAddress(value: 0xC3_5E_17_00_E1_11, type: .random)
        let arguments = ["--peripheral", "--psm", "0x80", "--mtu", "512", "--mps", "100", "--credits", "8"]
        try await withBumblePeer([.tcp], arguments: arguments, script: "bumble_coc.py") { peer in
            let log = PeerEventLog()
            let lines = peer.events
            let collector = Task { for await line in lines { log.append(line) } }
            defer { collector.cancel() }
            let peripheral = try #require(peer.ready.device.flatMap { BluetoothAddress(parsing: $0.address + "/random") })
            let runner = try SocketEngineRunner(transport: peer.transports[0], configuration: HostEngineConfiguration(randomAddress: address))
            guard Self.started(runner) else { return }
            runner.perform(.connect(peripheral, LEConnectionParameters()), id: 2)
            runner.run(seconds: 15) { $0.result(2) != nil }
            guard case .success(.connected(let connection))? = runner.result(2) else {
                Issue.record("connect: \(String(describing: runner.result(2)))")
                return
            }
            let link = connection.handle

            runner.perform(.openChannel(
                connection: link, spsm: SPSM(0x80), parameters: CreditBasedChannelParameters(mtu: 1024, mps: 64, initialCredits: 6)), id: 3)
            runner.run(seconds: 10) { $0.result(3) != nil }
            guard case .success(.channelOpened(let channel))? = runner.result(3) else {
                Issue.record("open: \(String(describing: runner.result(3)))")
                return
            }
            #expect(channel.peerMTU == 512 && channel.peerMPS == 100 && channel.peerCredits == 8)
            #expect(runner.run(seconds: 5) { _ in log.first("channel_open") != nil })
            #expect(log.first("channel_open")?["peer_mtu"] as? Int == 1024)
            #expect(log.first("channel_open")?["peer_mps"] as? Int == 64)

            // SDUs above both MPS values, one of the peer's full MTU, and a 1-octet one: bumble echoes each.
            let sdus = [300, 512, 101, 1].enumerated().map { Self.pattern($0.element, seed: $0.offset) }
            for (index, sdu) in sdus.enumerated() {
                runner.perform(.sendSDU(connection: link, cid: channel.cid, sdu), id: 10 + UInt32(index))
            }
            let echoed = runner.run(seconds: 15) { Self.sdus($0, cid: channel.cid).count >= sdus.count }
            #expect(echoed)
            #expect(Self.sdus(runner, cid: channel.cid) == sdus)
            #expect((0..<sdus.count).allSatisfy { runner.result(10 + UInt32($0)) == .success(.done) })
            // bumble's event lines come through its stdout, which may trail the echo on the link.
            #expect(Self.waitForSDUEvents(runner, log, count: sdus.count))
            let atBumble = log.all.compactMap { $0["sdu"] as? String }
            #expect(atBumble == sdus.map(Self.hex))

            // Goodput: 64 SDUs of 500 octets out and echoed back, queued at once (the channel holds
            // what credits do not cover). Information only.
            let count = 64, size = 500
            let before = Self.sdus(runner, cid: channel.cid).count
            let start = ContinuousClock.now
            for index in 0..<count {
                runner.perform(.sendSDU(connection: link, cid: channel.cid, Self.pattern(size, seed: index)), id: 100 + UInt32(index))
            }
            let backlog = runner.engine.channelBacklog(connection: link, cid: channel.cid)
            let done = runner.run(seconds: 60) { Self.sdus($0, cid: channel.cid).count >= before + count }
            let elapsed = ContinuousClock.now - start
            #expect(done)
            #expect(Array(Self.sdus(runner, cid: channel.cid).dropFirst(before)) == (0..<count).map { Self.pattern(size, seed: $0) })
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            print("LE CoC goodput over bumble: \(count * size) octets each way in \(seconds) s = \(Int(Double(count * size) / seconds)) octets/s per direction (backlog right after queueing: \(String(describing: backlog)))")

            runner.perform(.closeChannel(connection: link, cid: channel.cid), id: 4)
            runner.run(seconds: 10) { $0.result(4) != nil }
            #expect(runner.result(4) == .success(.done))
            #expect(runner.events.contains(.channelClosed(connection: link, cid: channel.cid, reason: .local)))
            #expect(runner.run(seconds: 5) { _ in log.first("closed") != nil })
            #expect(runner.engine.channelIDs(connection: link).isEmpty)
        }
    }

    @Test("a bumble central opens LE CoC and ECFC channels to the engine's server and reads over EATT")
    func bumbleCentralToEngineServer() async throws {
        let address = BluetoothAddress(value: 0xC3_5E_17_00_E1_12, type: .random)
        try await withBumblePeer([.tcp], arguments: ["--central", address.hexString], script: "bumble_coc.py") { peer in
            let log = PeerEventLog()
            let lines = peer.events
            let collector = Task { for await line in lines { log.append(line) } }
            defer { collector.cancel() }
            let runner = try SocketEngineRunner(transport: peer.transports[0], configuration: HostEngineConfiguration(randomAddress: address))
            guard Self.started(runner) else { return }
            runner.engine.setDatabase(try TestDatabase.make())
            runner.perform(.registerServer(
                spsm: SPSM(0x81), parameters: CreditBasedChannelParameters(mtu: 256, mps: 50, initialCredits: 5), security: .none), id: 2)
            runner.perform(.registerServer(spsm: .eatt, parameters: CreditBasedChannelParameters(mtu: 247, mps: 247), security: .none), id: 3)
            runner.perform(.startAdvertising(.named("engine-coc")), id: 4)
            runner.run(seconds: 10) { $0.result(4) != nil }
            #expect(runner.result(2) == .success(.done) && runner.result(3) == .success(.done) && runner.result(4) == .success(.done))

            peer.send(line: #"{"op": "connect"}"#)
            #expect(runner.run(seconds: 15) { r in r.events.contains { if case .connected = $0 { return true }; return false } })
            let link = try #require(runner.engine.connectionHandles.first)
            func incoming(_ r: SocketEngineRunner) -> [HostChannel] {
                r.events.compactMap { if case .channelOpened(let c) = $0, !c.initiatedLocally, c.psm == SPSM(0x81) { return c }; return nil }
            }

            // LE CoC from bumble: SDUs above our MPS of 50 arrive whole; the engine echoes them.
            peer.send(line: #"{"op": "open", "psm": 129, "mtu": 300, "mps": 40, "credits": 4}"#)
            #expect(runner.run(seconds: 10) { incoming($0).count == 1 })
            let channel = try #require(incoming(runner).first)
            #expect(!channel.isEnhanced && channel.peerMTU == 300 && channel.peerMPS == 40 && channel.peerCredits == 4)
            // bumble's request resolves after our response went out: wait for it before writing.
            #expect(runner.run(seconds: 10) { _ in log.first("channel_open") != nil })
            #expect(log.first("channel_open")?["peer_mps"] as? Int == 50)
            let sdus = [200, 256, 7].enumerated().map { Self.pattern($0.element, seed: 40 + $0.offset) }
            for sdu in sdus { peer.send(line: #"{"op": "send", "channel": 0, "data": "\#(Self.hex(sdu))"}"#) }
            #expect(runner.run(seconds: 10) { Self.sdus($0, cid: channel.cid).count >= sdus.count }, "\(log.all) \(runner.events.suffix(5))")
            #expect(Self.sdus(runner, cid: channel.cid) == sdus)
            for (index, sdu) in sdus.enumerated() { runner.perform(.sendSDU(connection: link, cid: channel.cid, sdu), id: 10 + UInt32(index)) }
            #expect(runner.run(seconds: 10) { _ in log.all.filter { $0["sdu"] != nil }.count >= sdus.count })
            #expect(log.all.compactMap { $0["sdu"] as? String } == sdus.map(Self.hex))

            // ECFC from bumble: three channels in one request, each carries its own SDU to bumble.
            peer.send(line: #"{"op": "open_enhanced", "psm": 129, "count": 3, "mtu": 100, "mps": 64, "credits": 3}"#)
            #expect(runner.run(seconds: 10) { incoming($0).count == 4 })
            let enhanced = Array(incoming(runner).dropFirst())
            #expect(enhanced.count == 3 && enhanced.allSatisfy { $0.isEnhanced && $0.peerMTU == 100 && $0.peerMPS == 64 })
            for (index, channel) in enhanced.enumerated() {
                runner.perform(.sendSDU(connection: link, cid: channel.cid, Self.pattern(100, seed: index)), id: 20 + UInt32(index))
            }
            #expect(runner.run(seconds: 10) { _ in log.all.filter { $0["sdu"] != nil }.count >= sdus.count + 3 })
            let enhancedAtBumble = log.all.filter { ($0["channel"] as? Int ?? 0) >= 1 && $0["sdu"] != nil }
            #expect(Set(enhancedAtBumble.compactMap { $0["sdu"] as? String }) == Set((0..<3).map { Self.hex(Self.pattern(100, seed: $0)) }))

            // EATT: two bearers on SPSM 0x0027, reads on both at once, served by the engine's GATT server.
            peer.send(line: #"{"op": "eatt", "count": 2}"#)
            #expect(runner.run(seconds: 10) { _ in log.first("eatt") != nil }, "\(log.all)")
            #expect(log.first("eatt")?["mtu"] as? [Int] == [247, 247])
            peer.send(line: #"{"op": "eatt_read", "bearer": 0, "handles": [3, 6]}"#)
            peer.send(line: #"{"op": "eatt_read", "bearer": 1, "handles": [6]}"#)
            #expect(runner.run(seconds: 10) { _ in log.all.filter { $0["eatt_read"] != nil }.count >= 3 }, "\(log.all)")
            let reads = log.all.filter { $0["eatt_read"] != nil }
            #expect(reads.first { ($0["eatt_read"] as? Int) == 3 }?["value"] as? String == "2a")
            #expect(reads.filter { ($0["eatt_read"] as? Int) == 6 }.compactMap { $0["value"] as? String }
                == [Self.hex(TestDatabase.longValue), Self.hex(TestDatabase.longValue)])

            // bumble closes the first channel.
            peer.send(line: #"{"op": "close", "channel": 0}"#)
            #expect(runner.run(seconds: 10) { $0.events.contains(.channelClosed(connection: link, cid: channel.cid, reason: .remote)) })
        }
    }
    @Test("engine central opens two EATT bearers to bumble's GATT server: discover, read, long read and write on them at once")
    func eattClientToBumble() async throws {
        let address = BluetoothAddress(value: 0xC3_5E_17_00_E1_13, type: .random)
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--eatt"], script: "bumble_coc.py") { peer in
            let log = PeerEventLog()
            let lines = peer.events
            let collector = Task { for await line in lines { log.append(line) } }
            defer { collector.cancel() }
            let peripheral = try #require(peer.ready.device.flatMap { BluetoothAddress(parsing: $0.address + "/random") })
            let runner = try SocketEngineRunner(transport: peer.transports[0], configuration: HostEngineConfiguration(randomAddress: address))
            guard Self.started(runner) else { return }
            runner.perform(.connect(peripheral, LEConnectionParameters()), id: 2)
            runner.run(seconds: 15) { $0.result(2) != nil }
            guard case .success(.connected(let connection))? = runner.result(2) else {
                Issue.record("connect: \(String(describing: runner.result(2)))")
                return
            }
            let link = connection.handle
            runner.perform(.openEnhancedChannels(
                connection: link, spsm: .eatt, count: 2, parameters: CreditBasedChannelParameters(mtu: 120, mps: 64, initialCredits: 6)), id: 3)
            runner.run(seconds: 10) { $0.result(3) != nil }
            guard case .success(.channelsOpened(let bearers))? = runner.result(3), bearers.count == 2 else {
                Issue.record("open: \(String(describing: runner.result(3)))")
                return
            }
            #expect(bearers.allSatisfy { $0.peerMTU == 200 && $0.peerMPS == 100 })

            runner.perform(.gattOnEATT(connection: link, cid: bearers[0].cid, .discoverAll), id: 4)
            runner.perform(.gattOnEATT(connection: link, cid: bearers[1].cid, .exchangeMTU), id: 5)
            runner.run(seconds: 10) { $0.result(4) != nil }
            guard case .success(.services(let services))? = runner.result(4) else {
                Issue.record("discover: \(String(describing: runner.result(4)))")
                return
            }
            #expect(runner.result(5) == .success(.mtu(120)))
            let service = try #require(services.first { $0.service.uuid == BluetoothUUID(0xFFF0) })
            let short = try #require(service.characteristics.first { $0.characteristic.uuid == BluetoothUUID(0xFFF1) })
            let long = try #require(service.characteristics.first { $0.characteristic.uuid == BluetoothUUID(0xFFF2) })
            let shortHandle = short.characteristic.valueHandle, longHandle = long.characteristic.valueHandle

            // Both bearers at once: a read on one, a long read (100 octets, ATT_MTU 120: one read) on the other.
            runner.perform(.gattOnEATT(connection: link, cid: bearers[0].cid, .read(handle: shortHandle)), id: 6)
            runner.perform(.gattOnEATT(connection: link, cid: bearers[1].cid, .readLong(handle: longHandle)), id: 7)
            runner.perform(.gattOnEATT(connection: link, cid: bearers[0].cid, .write(handle: longHandle, value: [1, 2, 3])), id: 8)
            runner.perform(.gattOnEATT(connection: link, cid: bearers[1].cid, .read(handle: longHandle)), id: 9)
            runner.run(seconds: 10) { r in (6...9).allSatisfy { r.result($0) != nil } }
            #expect(runner.result(6) == .success(.value([0xCA, 0xFE])))
            #expect(runner.result(7) == .success(.value((0..<100).map { UInt8($0) })))
            #expect(runner.result(8) == .success(.done))
            #expect(runner.run(seconds: 5) { _ in log.first("write") != nil })
            #expect(log.first("write")?["value"] as? String == "010203")
            // Ordered on bearer 1 after the long read, racing the write on bearer 0: either value.
            guard case .success(.value(let after))? = runner.result(9) else {
                Issue.record("read after write: \(String(describing: runner.result(9)))")
                return
            }
            #expect(after == [1, 2, 3] || after == (0..<100).map { UInt8($0) })

            // bumble 0.0.236 has no Credit Based Reconfigure handler: Command Reject "not understood",
            // which the engine reports as a refusal; the bearers keep their MTU and keep working.
            runner.perform(.reconfigureChannels(connection: link, cids: bearers.map { $0.cid }, mtu: 150, mps: 64), id: 10)
            runner.run(seconds: 10) { $0.result(10) != nil }
            #expect(runner.result(10) == .failure(.channelReconfigurationRefused(nil)))
            runner.perform(.gattOnEATT(connection: link, cid: bearers[1].cid, .exchangeMTU), id: 11)
            runner.perform(.gattOnEATT(connection: link, cid: bearers[1].cid, .read(handle: shortHandle)), id: 12)
            runner.run(seconds: 10) { $0.result(12) != nil }
            #expect(runner.result(11) == .success(.mtu(120)))
            #expect(runner.result(12) == .success(.value([0xCA, 0xFE])))
        }
    }
    @Test("paced one-way LE CoC transfer to a bumble sink: at most 2 SDUs wait in the channel (goodput for information)")
    func pacedTransferToBumbleSink() async throws {
        let address = BluetoothAddress(value: 0xC3_5E_17_00_E1_14, type: .random)
        let arguments = ["--peripheral", "--sink", "--psm", "0x80", "--mtu", "2048", "--mps", "247", "--credits", "32"]
        try await withBumblePeer([.tcp], arguments: arguments, script: "bumble_coc.py") { peer in
            let log = PeerEventLog()
            let lines = peer.events
            let collector = Task { for await line in lines { log.append(line) } }
            defer { collector.cancel() }
            let peripheral = try #require(peer.ready.device.flatMap { BluetoothAddress(parsing: $0.address + "/random") })
            let runner = try SocketEngineRunner(transport: peer.transports[0], configuration: HostEngineConfiguration(randomAddress: address))
            guard Self.started(runner) else { return }
            runner.perform(.connect(peripheral, LEConnectionParameters()), id: 2)
            runner.run(seconds: 15) { $0.result(2) != nil }
            guard case .success(.connected(let connection))? = runner.result(2) else {
                Issue.record("connect: \(String(describing: runner.result(2)))")
                return
            }
            let link = connection.handle
            runner.perform(.openChannel(connection: link, spsm: SPSM(0x80), parameters: CreditBasedChannelParameters()), id: 3)
            runner.run(seconds: 10) { $0.result(3) != nil }
            guard case .success(.channelOpened(let channel))? = runner.result(3) else {
                Issue.record("open: \(String(describing: runner.result(3)))")
                return
            }

            let count = 100, size = 1000
            var sent = 0, mostQueued = 0
            func octetsAtBumble() -> Int { log.all.last { $0["octets"] != nil }?["octets"] as? Int ?? 0 }
            let start = ContinuousClock.now
            let done = runner.run(seconds: 60) { runner in
                // The pacing loop: top the channel up to 2 queued SDUs, no more.
                while sent < count, let backlog = runner.engine.channelBacklog(connection: link, cid: channel.cid), backlog.queuedSDUs < 2 {
                    runner.perform(.sendSDU(connection: link, cid: channel.cid, Self.pattern(size, seed: sent)), id: 1000 + UInt32(sent))
                    sent += 1
                    mostQueued = max(mostQueued, runner.engine.channelBacklog(connection: link, cid: channel.cid)?.queuedSDUs ?? 0)
                }
                return octetsAtBumble() >= count * size
            }
            let elapsed = ContinuousClock.now - start
            #expect(done, "bumble got \(octetsAtBumble()) octets")
            #expect(sent == count)
            #expect(mostQueued <= 2)
            #expect((0..<count).allSatisfy { runner.result(1000 + UInt32($0)) == .success(.done) })
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            print("LE CoC paced one-way goodput to bumble: \(count * size) octets in \(seconds) s = \(Int(Double(count * size) / seconds)) octets/s (MPS \(channel.peerMPS), 27-octet ACL buffers)")
        }
    }
}
