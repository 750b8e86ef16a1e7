import Foundation
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
            let next = try await Self.run(peer, ["--psm", "0x80", "--count", "5", "--length", "40", "--echo"])
            #expect(next.status == 0, "stderr: \(next.standardError)")
            #expect(next.standardOutput.contains("echoed 5/5, 5 intact"), "stdout: \(next.standardOutput)")
        }
    }
}
