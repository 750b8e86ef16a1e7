import BluewireCore
import BluewireHostEngine
import BluewireL2CAP
import Foundation
import PeerTestSupport
import Testing

/// A bumble central asks for an LE credit based channel on an SPSM the engine serves only to encrypted
/// links (Core Vol 3 Part A §4.23: the request is refused with a result naming what is missing). bumble's
/// L2CAP reports the refusal with the result's name; the link and the engine's other SPSM keep working.
@Suite("Host engine: channel refused for insufficient security, against bumble", .serialized)
struct EngineChannelSecurityBumbleTests {
    @Test("an encrypted-only SPSM refuses an unencrypted link with Insufficient Authentication; an open SPSM then opens")
    func refusedForSecurity() async throws {
        let address = BluetoothAddress(value: 0xC3_5E_17_00_EA_01, type: .random)
        try await withBumblePeer([.tcp], arguments: ["--central", address.hexString], script: "bumble_coc.py") { peer in
            let log = PeerEventLog()
            let lines = peer.events
            let collector = Task { for await line in lines { log.append(line) } }
            defer { collector.cancel() }
            let runner = try SocketEngineRunner(transport: peer.transports[0], configuration: HostEngineConfiguration(randomAddress: address))
            guard EngineChannelBumbleTests.started(runner) else { return }
            runner.perform(.registerServer(spsm: SPSM(0x82), parameters: CreditBasedChannelParameters(), security: .encrypted), id: 2)
            runner.perform(.registerServer(spsm: SPSM(0x81), parameters: CreditBasedChannelParameters(), security: .none), id: 3)
            runner.perform(.startAdvertising(.named("engine-coc-secure")), id: 4)
            runner.run(seconds: 10) { $0.result(4) != nil }
            peer.send(line: #"{"op": "connect"}"#)
            #expect(runner.run(seconds: 15) { r in r.events.contains { if case .connected = $0 { return true }; return false } })
            #expect(runner.run(seconds: 10) { _ in log.first("connected") != nil })

            // No key on this link: the result is Insufficient Authentication (0x0005), and bumble names it.
            peer.send(line: #"{"op": "open", "psm": 130, "mtu": 200, "mps": 100, "credits": 4}"#)
            #expect(runner.run(seconds: 10) { _ in log.first("refused") != nil }, "bumble: \(log.all.suffix(3))")
            #expect(log.first("refused")?["refused"] as? Int == 0x0005)
            let name = try #require(log.first("refused")?["result"] as? String)
            #expect(name.contains("INSUFFICIENT_AUTHENTICATION"), "bumble: \(name)")
            #expect(!runner.events.contains { if case .channelOpened = $0 { return true }; return false })

            peer.send(line: #"{"op": "open", "psm": 129, "mtu": 200, "mps": 100, "credits": 4}"#)
            #expect(runner.run(seconds: 10) { r in r.events.contains { if case .channelOpened = $0 { return true }; return false } })
            #expect(runner.run(seconds: 5) { _ in log.first("channel_open") != nil })
        }
    }
}
