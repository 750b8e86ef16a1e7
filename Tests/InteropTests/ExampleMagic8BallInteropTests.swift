import BluewireCore
import ExampleSupport
import Foundation
import Testing
import PeerTestSupport

/// The Magic 8-Ball example (Examples/Magic8Ball) run as processes on one bumble link.
@Suite("Example: Magic 8-Ball")
struct ExampleMagic8BallInteropTests {
    @Test func aCentralAsksAndOnlyTheAskerIsNotifiedOfTheAnswer() async throws {
        let address = newStaticAddress()
        try await withBumblePeer([.tcp, .tcp], arguments: ["--central", address.hexString, "--manual"]) { peer in
            let peerLog = EventLog(peer.events.map { PeerJSON(line: $0) })
            let ball = try PeripheralProcess("magic8ball-peripheral", ["--transport", peer.transports[0], "--own-address", address.hexString])
            defer { ball.stop() }
            try await ball.first("the ball to be ready") { $0.hasPrefix("Magic 8-Ball ready as \(address)") }
            // A bumble central subscribes to answers first: it must not hear the answers given to others.
            peer.command(0, "connect", ["discover": true, "mtu": 64])
            try await peerLog.first("bumble's discovery") { $0.isCentral(0, "discovered") }
            let events = await peerLog.events
            let question = try #require(discoveredHandle(events, central: 0, Magic8BallProfile.question))
            let answer = try #require(discoveredHandle(events, central: 0, Magic8BallProfile.answer))

            // Bluewire's central, found by scanning for the service: the same question twice, the same answer.
            let asked = "Will the tests pass?"
            for _ in 0..<2 {
                let central = try PeripheralProcess("magic8ball-central", ["--transport", peer.transports[1], asked])
                defer { central.stop() }
                #expect(await central.exitStatus() == 0, "stderr: \(central.standardError)")
                #expect(await central.lines.events == [Magic8BallProfile.answer(to: Array(asked.utf8))])
            }
            try await ball.lines.wait(for: 2, "the ball's answers") { $0.hasPrefix("\"\(asked)\" -> ") }

            let bumbleQuestion = "Is bumble a real peer?"
            peer.command(0, "write", ["handle": question, "value": hexBytes(Array(bumbleQuestion.utf8))])
            let told = try await peerLog.first("bumble's answer") { $0.isCentral(0, "notification", answer) }
            let expected = Magic8BallProfile.answer(to: Array(bumbleQuestion.utf8))
            #expect(told["value"]?.string == hexBytes(Array(expected.utf8)))
            #expect(await peerLog.events.filter { $0.isCentral(0, "notification") }.count == 1,
                    "the answers to the other central's questions went to it alone")
            // The answer characteristic reads as this central's last answer (a dynamic value per connection).
            peer.command(0, "read", ["handle": answer])
            let read = try await peerLog.first("the read answer") { $0.isCentral(0, "read", answer) }
            #expect(read["value"]?.string == hexBytes(Array(expected.utf8)))

            ball.send(signal: SIGINT)
            #expect(await ball.exitStatus() == 0, "stderr: \(ball.standardError)")
            #expect(await ball.lines.events.last == "Magic 8-Ball stopped")
        }
    }
}

extension ExampleMagic8BallInteropTests {
    /// An answer longer than 20 octets (the payload of a notification at the default ATT_MTU of 23)
    /// arrives whole: the central exchanges the MTU, and reads the value (Read Blob) if a
    /// notification may have been cut.
    @Test func anAnswerLongerThanTwentyOctetsArrivesWhole() async throws {
        let asked = try #require((0..<10_000).lazy.map { "Question \($0)?" }.first {
            Magic8BallProfile.answer(to: Array($0.utf8)).utf8.count > 20
        })
        let expected = Magic8BallProfile.answer(to: Array(asked.utf8))
        let address = newStaticAddress()
        try await withBumblePeer([.tcp, .tcp], arguments: []) { peer in
            let ball = try PeripheralProcess("magic8ball-peripheral", ["--transport", peer.transports[0], "--own-address", address.hexString])
            defer { ball.stop() }
            try await ball.first("the ball to be ready") { $0.hasPrefix("Magic 8-Ball ready as \(address)") }
            let central = try PeripheralProcess("magic8ball-central", ["--transport", peer.transports[1], "--peer", address.hexString, asked])
            defer { central.stop() }
            #expect(await central.exitStatus() == 0, "stderr: \(central.standardError)")
            #expect(await central.lines.events == [expected], "\(expected.utf8.count)-octet answer")
        }
    }

    /// A program killed while connecting leaves LE Create Connection pending on the controller; the
    /// example central clears it at start (LE Create Connection Cancel) and connects.
    @Test func theCentralConnectsAfterAProgramKilledWhileConnecting() async throws {
        let address = newStaticAddress()
        try await withBumblePeer([.tcp, .tcp], arguments: []) { peer in
            let ball = try PeripheralProcess("magic8ball-peripheral", ["--transport", peer.transports[0], "--own-address", address.hexString])
            defer { ball.stop() }
            try await ball.first("the ball to be ready") { $0.hasPrefix("Magic 8-Ball ready as \(address)") }
            let killed = try PeripheralProcess("bluewire", [
                "gatt", "read", "C0:DE:00:00:00:03/random", "3", "--connect-timeout", "60", "--verbose", "--transport", peer.transports[1],
            ])
            defer { killed.stop() }
            // The trace goes to a file: checked until the controller has answered LE Create
            // Connection with Command Status (the attempt is pending).
            try await waitUntil(timeout: .seconds(20)) {
                let log = killed.standardError
                guard let sent = log.range(of: "command LE Create Connection (0x200d)") else { return false }
                return log[sent.upperBound...].contains("< Command Status")
            }
            killed.send(signal: SIGKILL)
            _ = await killed.exitStatus()
            let central = try PeripheralProcess("magic8ball-central", ["--transport", peer.transports[1], "--peer", address.hexString, "Will it work?"])
            defer { central.stop() }
            #expect(await central.exitStatus() == 0, "stderr: \(central.standardError)")
            #expect(await central.lines.events == [Magic8BallProfile.answer(to: Array("Will it work?".utf8))])
        }
    }

    /// `gatt dump` and `gatt read` show a value as text when it is valid UTF-8 (the Device Name), and
    /// an empty value (the answer before any question) as `(empty)`.
    @Test func valuesShowAsTextAndAnEmptyValueAsEmpty() async throws {
        let address = newStaticAddress()
        try await withBumblePeer([.tcp, .tcp], arguments: []) { peer in
            let ball = try PeripheralProcess("magic8ball-peripheral", ["--transport", peer.transports[0], "--own-address", address.hexString])
            defer { ball.stop() }
            try await ball.first("the ball to be ready") { $0.hasPrefix("Magic 8-Ball ready as \(address)") }
            let dump = try await ProcessRunner.run(try ProcessRunner.bluewire, ["gatt", "dump", "\(address)", "--transport", peer.transports[1]])
            #expect(dump.status == 0, "stderr: \(dump.standardError)")
            let name = try #require(dump.outputLines.first { $0.contains("Device Name") && $0.contains("Value") }, "\(dump.standardOutput)")
            #expect(name.hasSuffix(hexString(Array("Magic 8-Ball".utf8)) + " \"Magic 8-Ball\""), "\(name)")
            let answer = try #require(dump.outputLines.first { $0.contains(Magic8BallProfile.answer.shortString) && $0.contains("Value") }, "\(dump.standardOutput)")
            #expect(answer.hasSuffix("(empty)"), "\(answer)")
            let handle = try #require(answer.split(separator: " ").first.map(String.init))
            let read = try await ProcessRunner.run(try ProcessRunner.bluewire, ["gatt", "read", "\(address)", handle, "--transport", peer.transports[1]])
            #expect(read.status == 0 && read.standardOutput == "(empty)\n", "\(read.standardOutput) \(read.standardError)")
        }
    }
}
