import Bluewire
import BluewireTransport
import Foundation
import PeerTestSupport
import Testing

/// `EngineHost.openChannel`/`listen` and `L2CAPChannel` against bumble's LE credit based channels
/// (Tests/Peers/bumble_coc.py): both directions, close from either side, refusal by name.
@Suite("EngineHost L2CAP channels against bumble", .serialized)
struct EngineHostChannelTests {
    static let psm = SPSM(0x80)

    static func host(_ peer: BumblePeer, address: BluetoothAddress = .randomStatic(0x1234_5678_9ABC)) async throws -> EngineHost {
        let transport = try await TransportSpec(parsing: peer.transports[0]).open()
        let host = EngineHost(transport: transport, configuration: HostEngineConfiguration(randomAddress: address))
        _ = try await host.perform(.start).get()
        return host
    }

    /// A host connected as central to bumble's peripheral: the host and the link's handle.
    static func connected(_ peer: BumblePeer) async throws -> (EngineHost, UInt16) {
        let host = try await host(peer)
        let device = try #require(peer.ready.device?.address)
        let address = try #require(BluetoothAddress(parsing: device + "/random"))
        guard case .connected(let link) = try await host.perform(.connect(address, LEConnectionParameters())).get() else {
            throw StartFailure()
        }
        return (host, link.handle)
    }

    struct StartFailure: Error {}

    static func collect(_ channel: L2CAPChannel, count: Int) async throws -> [[UInt8]] {
        var received: [[UInt8]] = []
        for try await sdu in channel.sdus {
            received.append(sdu)
            if received.count == count { break }
        }
        return received
    }

    @Test("open, SDUs of 1, 300 and 512 octets echoed byte-exact, close by us ends the SDUs cleanly")
    func openEchoClose() async throws {
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--psm", "0x80"], script: "bumble_coc.py") { peer in
            let events = CocPeerEvents(peer)
            let (host, handle) = try await Self.connected(peer)
            let channel = try await host.openChannel(connection: handle, psm: Self.psm, mtu: 512, mps: 200, credits: 8)
            #expect(channel.peerMTU == 512 && channel.peerMPS == 100, "bumble_coc.py's defaults")
            #expect(channel.initiatedLocally && channel.psm == Self.psm)
            let sdus = [[0x42], (0..<300).map { UInt8(truncatingIfNeeded: $0 * 7) }, (0..<512).map { UInt8(truncatingIfNeeded: $0 ^ 0x5A) }]
            for sdu in sdus { try await channel.send(sdu) }
            let echoed = try await Self.collect(channel, count: 3)
            #expect(echoed == sdus)
            await channel.close()
            #expect(await events.wait { $0["closed"] as? Int == 0 } != nil, "bumble saw the channel close")
            var after: [[UInt8]] = []
            for try await sdu in channel.sdus { after.append(sdu) }
            #expect(after.isEmpty)
            #expect(channel.endReason == .closed(.local))
            await #expect(throws: L2CAPChannelError.closed(.local)) { try await channel.send([1]) }
            await host.close()
        }
    }

    @Test("bumble closes the channel: the SDUs sent before it are read, then the sequence ends; a send fails by name")
    func closedByPeer() async throws {
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--psm", "0x80"], script: "bumble_coc.py") { peer in
            _ = CocPeerEvents(peer)
            let (host, handle) = try await Self.connected(peer)
            let channel = try await host.openChannel(connection: handle, psm: Self.psm)
            peer.send(line: #"{"op": "send", "channel": 0, "data": "0102030405"}"#)
            peer.send(line: #"{"op": "close", "channel": 0}"#)
            var received: [[UInt8]] = []
            for try await sdu in channel.sdus { received.append(sdu) }
            #expect(received == [[1, 2, 3, 4, 5]])
            #expect(channel.endReason == .closed(.remote))
            await #expect(throws: L2CAPChannelError.closed(.remote)) { try await channel.send([1]) }
            await host.close()
        }
    }

    @Test("an SPSM bumble does not serve: refused with SPSM not supported; the link still opens the next one")
    func refusedUnknownPSM() async throws {
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--psm", "0x80"], script: "bumble_coc.py") { peer in
            let (host, handle) = try await Self.connected(peer)
            do throws(L2CAPChannelError) {
                _ = try await host.openChannel(connection: handle, psm: SPSM(0x81))
                Issue.record("SPSM 0x81 opened")
            } catch {
                #expect(error == .refused(.refused(.spsmNotSupported)))
                #expect("\(error)".contains("SPSM not supported"), "\(error)")
            }
            let channel = try await host.openChannel(connection: handle, psm: Self.psm)
            try await channel.send([9, 8, 7])
            #expect(try await Self.collect(channel, count: 1) == [[9, 8, 7]])
            await host.close()
        }
    }

    @Test("the link goes down: the SDU sequence throws disconnected with the reason, sends fail the same way")
    func linkLoss() async throws {
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--psm", "0x80"], script: "bumble_coc.py") { peer in
            let (host, handle) = try await Self.connected(peer)
            let channel = try await host.openChannel(connection: handle, psm: Self.psm)
            _ = await host.perform(.disconnect(handle: handle, reason: .remoteUserTerminatedConnection))
            do throws(L2CAPChannelError) {
                for try await _ in channel.sdus {}
                Issue.record("the sequence ended without an error")
            } catch {
                guard case .disconnected = error else { Issue.record("\(error)"); return }
            }
            await #expect(throws: L2CAPChannelError.self) { try await channel.send([1]) }
            await host.close()
        }
    }

    @Test("listen: a bumble central opens a channel, SDUs both ways byte-exact, its close ends the sequence")
    func listenAccepts() async throws {
        let own = BluetoothAddress.randomStatic(0x0A5A_1700_CC01)
        let ownText = own.description.split(separator: "/").first.map(String.init) ?? own.description
        try await withBumblePeer([.tcp], arguments: ["--central", ownText], script: "bumble_coc.py") { peer in
            let events = CocPeerEvents(peer)
            let host = try await Self.host(peer, address: own)
            let listener = try await host.listen(psm: Self.psm, mtu: 600, mps: 150, credits: 4)
            _ = try await host.perform(.startAdvertising(.named("bw-listen"))).get()
            peer.send(line: #"{"op": "connect"}"#)
            #expect(await events.wait { $0["connected"] != nil } != nil)
            peer.send(line: #"{"op": "open", "psm": 128, "mtu": 512, "mps": 100, "credits": 8}"#)
            var iterator = listener.makeAsyncIterator()
            let channel = try #require(await iterator.next())
            #expect(!channel.initiatedLocally && channel.peerMTU == 512 && channel.peerMPS == 100 && channel.mtu == 600)
            // The listener yields the channel as our response goes out; bumble has it (channel 0) only
            // once that response reached it. A send before then finds no channel 0 and is dropped.
            #expect(await events.wait { $0["channel_open"] as? Int == 0 } != nil)
            let incoming = (0..<600).map { UInt8(truncatingIfNeeded: $0 * 3) }
            peer.send(line: #"{"op": "send", "channel": 0, "data": "\#(cocHex(incoming))"}"#)
            #expect(try await Self.collect(channel, count: 1) == [incoming])
            let outgoing = (0..<512).map { UInt8(truncatingIfNeeded: 255 - $0) }
            try await channel.send(outgoing)
            #expect(await events.wait { $0["sdu"] as? String == cocHex(outgoing) } != nil)
            peer.send(line: #"{"op": "close", "channel": 0}"#)
            for try await _ in channel.sdus {}
            #expect(channel.endReason == .closed(.remote))
            await listener.stop()
            await host.close()
        }
    }
}
