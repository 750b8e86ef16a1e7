import BluewireCore
import ExampleSupport
import Foundation
import Testing
import PeerTestSupport

/// The Magic 8-Ball central with several balls (its `PeripheralMap`): three magic8ball-peripheral
/// processes and one magic8ball-central process, each on its own controller of one bumble link.
@Suite("Example: Magic 8-Ball, three balls")
struct ExampleMagic8BallMapInteropTests {
    @Test func theCentralGetsThreeAnswersFromThreeBalls() async throws {
        let addresses = (0..<3).map { _ in newStaticAddress() }
        try await withBumblePeer([.tcp, .tcp, .tcp, .tcp], arguments: []) { peer in
            var balls: [PeripheralProcess] = []
            defer { for ball in balls { ball.stop() } }
            for (index, address) in addresses.enumerated() {
                let ball = try PeripheralProcess("magic8ball-peripheral", [
                    "--transport", peer.transports[index], "--own-address", address.hexString, "--name", "Ball \(index)",
                ])
                balls.append(ball)
                try await ball.first("ball \(index) to be ready") { $0.hasPrefix("Ball \(index) ready as \(address)") }
            }
            let asked = "Will all three answer?"
            let expected = Magic8BallProfile.answer(to: Array(asked.utf8))
            let central = try PeripheralProcess("magic8ball-central", ["--transport", peer.transports[3], "--count", "3", asked])
            defer { central.stop() }
            #expect(await central.exitStatus(within: .seconds(60)) == 0, "stderr: \(central.standardError)")
            let lines = await central.lines.events
            // One "ADDRESS: answer" line per ball, in whatever order they became ready.
            #expect(lines.count == 3, "\(lines)")
            let answered = Set(lines.compactMap { line -> String? in
                guard let separator = line.range(of: ": ") else { return nil }
                #expect(String(line[separator.upperBound...]) == expected, "\(line)")
                return String(line[..<separator.lowerBound])
            })
            #expect(answered == Set(addresses.map { "\($0)" }), "answers came from \(answered)")
            // Each ball was asked by this central, once.
            for (index, ball) in balls.enumerated() {
                try await ball.first("ball \(index)'s answer") { $0.hasPrefix("\"\(asked)\" -> ") }
                #expect(await ball.lines.events.filter { $0.hasPrefix("\"\(asked)\" -> ") }.count == 1)
            }
        }
    }
}
