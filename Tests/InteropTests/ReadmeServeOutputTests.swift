import BluewireCore
import Foundation
import PeerTestSupport
import Testing

/// README's sample `bluewire serve` session ("Peripheral role"), produced by the real command: serve
/// `Examples/device.json` as README does, with a bumble central doing what the sample shows (discovery
/// with its reads and subscription, a long read, a write, a disconnection). The sample's first three lines must be
/// the command's first three lines exactly, and each later line must appear in the command's output
/// in the sample's order, the central's address and the link's handle aside.
@Suite("README: the sample serve output")
struct ReadmeServeOutputTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The README block that starts with `advertising "Thermometer" as`.
    static func sample() throws -> [String] {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix("advertising \"Thermometer\" as ") }, "no sample in README")
        let end = try #require(lines[start...].firstIndex { $0.hasPrefix("```") })
        return Array(lines[start..<end])
    }

    /// The line with the central's address and the link's handle made placeholders.
    static func template(_ line: String, central: String) -> String {
        line.replacingOccurrences(of: central, with: "CENTRAL")
            .replacingOccurrences(of: #"^(connected|read|write|subscribed|unsubscribed|indication confirmed|disconnected) 0x[0-9a-f]{4}"#,
                                  with: "$1 LINK", options: .regularExpression)
    }

    @Test("README's sample serve session is what serve prints")
    func sampleIsCurrent() async throws {
        let sample = try Self.sample()
        #expect(sample.count >= 6, "\(sample)")
        let own = "C0:11:22:33:44:55"
        let readmeCentral = try #require(sample.first { $0.hasPrefix("connected ") }?.split(separator: " ").last.map(String.init))
        try await withBumblePeer([.tcp], arguments: ["--central", own]) { peer in
            let central = try #require(peer.ready.device?.address) + "/random"
            let serve = try PeripheralProcess("bluewire", [
                "serve", "--db", Self.root.appendingPathComponent("Examples/device.json").path,
                "--transport", peer.transports[0], "--own-address", own,
            ])
            defer { serve.stop() }
            // bumble's central connects, discovers (reading every value, the long descriptor by Read
            // Blob) and subscribes; then it writes the indicating value, which serve relays to it.
            try await serve.first("the subscription") { $0.hasPrefix("subscribed ") && $0.hasSuffix(" indications") }
            // The long descriptor (Read, then Read Blob from offset 22).
            peer.command(0, "read", ["handle": 0x0009])
            try await serve.first("the Read Blob") { $0.contains(" 0x0009 offset 22:") }
            peer.command(0, "write", ["handle": 0x000B, "value": "0102"])
            try await serve.first("the confirmation") { $0.hasPrefix("indication confirmed") }
            peer.command(0, "disconnect")
            try await serve.first("the disconnection") { $0.hasPrefix("disconnected ") }
            serve.send(signal: SIGINT)
            #expect(await serve.exitStatus() == 0, "stderr: \(serve.standardError)")
            let output = await serve.lines.events
            #expect(Array(output.prefix(3)) == Array(sample.prefix(3)), "README:\n\(sample.joined(separator: "\n"))\nserve:\n\(output.joined(separator: "\n"))")
            var remaining = output.dropFirst(3).map { Self.template($0, central: central) }[...]
            for line in sample.dropFirst(3) {
                let wanted = Self.template(line, central: readmeCentral)
                guard let index = remaining.firstIndex(of: wanted) else {
                    Issue.record("README's line \"\(line)\" is not in serve's output (in this order):\n\(output.joined(separator: "\n"))")
                    break
                }
                remaining = remaining[(index + 1)...]
            }
        }
    }
}
