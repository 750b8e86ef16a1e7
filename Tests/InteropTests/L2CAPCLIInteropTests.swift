import Foundation
import Synchronization
import PeerTestSupport
import Testing

/// `bluewire l2cap send` as a user runs it against bumble's LE credit based channel server
/// (Tests/Peers/bumble_coc.py, which echoes every SDU).
@Suite("bluewire l2cap against a bumble L2CAP server", .serialized)
struct L2CAPCLIInteropTests {
    static func run(_ peer: BumblePeer, _ arguments: [String]) async throws -> ProcessResult {
        let address = try #require(peer.ready.device?.address, "bumble started no peripheral") + "/random"
        return try await ProcessRunner.run(try ProcessRunner.bluewire,
                                           ["l2cap", "send", address, "--transport", peer.transports[0]] + arguments,
                                           timeout: .seconds(40))
    }

    @Test("300-octet SDUs (larger than bumble's MPS of 100) come back intact; --json report")
    func echoedIntact() async throws {
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--psm", "0x80"], script: "bumble_coc.py") { peer in
            let result = try await Self.run(peer, ["--psm", "0x80", "--count", "50", "--length", "300", "--echo", "--json"])
            #expect(result.status == 0, "stderr: \(result.standardError)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any],
                                      "stdout: \(result.standardOutput)")
            expectSnakeCaseKeys(object)
            #expect(object["sdus"] as? Int == 50 && object["sdu_length"] as? Int == 300)
            #expect(object["peer_mps"] as? Int == 100, "bumble_coc.py's default MPS")
            let echo = try #require(object["echo"] as? [String: Any])
            #expect(echo["received"] as? Int == 50 && echo["intact"] as? Int == 50)
            #expect((object["kilobits_per_second"] as? Double ?? 0) > 0)
        }
    }

    @Test("an SPSM nobody listens on: exit 1 naming the refusal; the next command connects and sends")
    func refusedThenWorks() async throws {
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--psm", "0x80"], script: "bumble_coc.py") { peer in
            let refused = try await Self.run(peer, ["--psm", "0x81", "--count", "1"])
            #expect(refused.status == 1)
            #expect(refused.standardError.contains("SPSM not supported"), "stderr: \(refused.standardError)")
            // The PSM as the positional argument (as connect and listen take it); --psm above.
            let next = try await Self.run(peer, ["0x80", "--count", "5", "--length", "40", "--echo"])
            #expect(next.status == 0, "stderr: \(next.standardError)")
            #expect(next.standardOutput.contains("echoed 5/5, 5 intact"), "stdout: \(next.standardOutput)")
        }
    }
}

extension L2CAPCLIInteropTests {
    @Test("l2cap listen --echo --json: a bumble central opens a channel, its 300-octet SDU comes back; SIGINT stops with 130")
    func listenEchoesToABumbleCentral() async throws {
        let own = "C4:5A:17:00:CC:01"
        try await withBumblePeer([.tcp], arguments: ["--central", own], script: "bumble_coc.py") { peer in
            let lines = Mutex<[String]>([])
            let stream = peer.events
            let collector = Task { for await line in stream { lines.withLock { $0.append(line) } } }
            defer { collector.cancel() }
            let listener = try PeripheralProcess("bluewire", [
                "l2cap", "listen", "0x0080", "--echo", "--json", "--name", "bw-l2cap", "--mps", "100",
                "--own-address", own, "--transport", peer.transports[0],
            ])
            defer { listener.stop() }
            try await listener.first("listening") { $0.contains(#""event":"listening""#) && $0.contains(#""psm":128"#) }
            peer.send(line: #"{"op": "connect"}"#)
            // bumble runs each command as it arrives: open only once connected.
            let connectDeadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < connectDeadline, !lines.withLock({ $0.contains { $0.contains(#""connected""#) } }) {
                try await Task.sleep(for: .milliseconds(20))
            }
            peer.send(line: #"{"op": "open", "psm": 128, "mtu": 512, "mps": 100, "credits": 8}"#)
            let sdu = (0..<300).map { UInt8(truncatingIfNeeded: $0 * 7) }
            let hex = sdu.map { String(format: "%02x", $0) }.joined()
            try await listener.first("channel opened") { $0.contains(#""event":"opened""#) && $0.contains(#""peer_mps":100"#) && $0.contains(#""peer_mtu":512"#) }
            // The listener reports the channel when it accepts; bumble has it (channel 0) only once
            // the response reached it: a send before that would find no channel 0.
            let openDeadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < openDeadline, !lines.withLock({ $0.contains { $0.contains(#""channel_open""#) } }) {
                try await Task.sleep(for: .milliseconds(20))
            }
            peer.send(line: #"{"op": "send", "channel": 0, "data": "\#(hex)"}"#)
            try await listener.first("the SDU") { $0.contains(#""event":"sdu""#) && $0.contains(#""length":300"#) && $0.contains(hex) }
            let deadline = ContinuousClock.now + .seconds(10)
            var echoed = false
            while ContinuousClock.now < deadline, !echoed {
                echoed = lines.withLock { $0.contains { $0.contains(#""sdu": "\#(hex)""#) } }
                if !echoed { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(echoed, "bumble got the SDU back: \(lines.withLock { $0.suffix(5) })")
            listener.send(signal: SIGINT)
            #expect(await listener.exitStatus() == 130)
        }
    }
}
