import BluewireCore
import Foundation
import Testing
import PeerTestSupport

/// `bluewire throughput --mode l2cap` against `bluewire serve --throughput --psm`, both processes
/// Bluewire on their own `EngineHost`, each on one bumble controller of one `LocalLink` (bumble is
/// only the link). The controllers report 251-octet LE ACL buffers, so a 247-octet K-frame leaves
/// in one ACL packet. bumble moves data as fast as Python can (no radio timing): the test checks
/// that every SDU arrives in order and that the tool reports a rate, never how fast it was.
@Suite("Throughput: bluewire throughput --mode l2cap against bluewire serve --throughput --psm over bumble", .serialized)
struct ChannelThroughputInteropTests {
    static let psm = "0x80"

    static func object(_ line: String) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    }

    /// Starts the source on `transport` and waits for its advertising line.
    static func startSource(_ transport: String, address: BluetoothAddress) async throws -> PeripheralProcess {
        let server = try PeripheralProcess("bluewire", [
            "serve", "--throughput", "--psm", psm, "--json", "--transport", transport, "--own-address", address.hexString,
        ])
        let line = try await server.first("the source's advertising line") { $0.contains("\"advertising\"") }
        #expect(ThroughputInteropTests.int(object(line)?["psm"]) == 0x80, "\(line)")
        return server
    }

    /// One `bluewire throughput --mode l2cap` run; its JSON report and stderr.
    static func measure(_ address: BluetoothAddress, _ transport: String, extra: [String]) async throws -> (report: [String: Any], stderr: String) {
        let result = try await ProcessRunner.run(try ProcessRunner.bluewire, [
            "throughput", "\(address)", "--mode", "l2cap", "--psm", psm, "--json", "--transport", transport,
        ] + extra, timeout: .seconds(60))
        #expect(result.status == 0, "stderr: \(result.standardError)")
        let line = try #require(result.outputLines.last, "no report on stdout; stderr: \(result.standardError)")
        let report = try #require(object(line), "not JSON: \(line)")
        return (report, result.standardError)
    }

    /// What every run must show: SDUs of the default MTU (512), none lost or reordered, a rate.
    static func check(_ report: [String: Any]) {
        let int = ThroughputInteropTests.int, double = ThroughputInteropTests.double
        #expect(report["mode"] as? String == "l2cap")
        expectSnakeCaseKeys(report)
        #expect(int(report["mtu"]) == 512, "our receive MTU")
        #expect(int(report["payload_length"]) == 512, "the source sends SDUs of our MTU")
        let packets = int(report["packets"]) ?? 0
        #expect(packets > 0)
        #expect(int(report["octets"]) == packets * 512)
        #expect(int(report["lost"]) == 0, "\(report)")
        #expect(int(report["out_of_order"]) == 0, "\(report)")
        #expect((double(report["kilobits_per_second"]) ?? 0) > 0)
        #expect((double(report["packets_per_second"]) ?? 0) > 0)
        print("bumble link, l2cap: \(report)")
    }

    @Test("SDUs from serve --throughput --psm arrive without loss or reordering; SIGINT stops serve cleanly", .timeLimit(.minutes(3)))
    func sdusArriveInOrderAndServeStopsCleanly() async throws {
        let address = newStaticAddress()
        try await withBumblePeer([.tcp, .tcp], arguments: ["--acl-buffer", "251"]) { peer in
            let server = try await Self.startSource(peer.transports[0], address: address)
            defer { server.stop() }
            let (report, stderr) = try await Self.measure(address, peer.transports[1], extra: ["--duration", "2"])
            Self.check(report)
            // stderr is not a terminal here: one progress line per second, counting SDUs.
            let progress = stderr.split(separator: "\n").filter { $0.contains("kbit/s") && $0.contains("SDUs") }
            #expect(!progress.isEmpty, "no progress line on stderr: \(stderr)")

            // The source saw the channel open at our MTU and end when we closed it, having sent at
            // least what arrived; then the central disconnected.
            let opened = try await server.first("the channel-opened line") { $0.contains("\"channel-opened\"") }
            #expect(ThroughputInteropTests.int(Self.object(opened)?["peer_mtu"]) == 512, "\(opened)")
            let closed = try await server.first("the channel-closed line") { $0.contains("\"channel-closed\"") }
            let sent = ThroughputInteropTests.int(Self.object(closed)?["sdus"]) ?? 0
            #expect(sent >= (ThroughputInteropTests.int(report["packets"]) ?? .max), "\(closed)")
            try await server.first("the central's disconnection") { $0.contains("\"disconnected\"") }

            // Advertising resumed: a second run is served too (stopped after 200 SDUs).
            let (second, _) = try await Self.measure(address, peer.transports[1], extra: ["--duration", "10", "--packets", "200"])
            Self.check(second)
            #expect(ThroughputInteropTests.int(second["packets"]) == 200)

            server.send(signal: SIGINT)
            #expect(await server.exitStatus() == 0, "stderr: \(server.standardError)")
            let last = await server.lines.events.last ?? ""
            #expect(Self.object(last)?["event"] as? String == "stopped" && Self.object(last)?["signal"] as? String == "SIGINT", "\(last)")

            // The controller was left clean: a fresh source on it serves a fresh run.
            let again = try await Self.startSource(peer.transports[0], address: address)
            defer { again.stop() }
            let (third, _) = try await Self.measure(address, peer.transports[1], extra: ["--duration", "10", "--packets", "100"])
            Self.check(third)
            again.send(signal: SIGTERM)
            #expect(await again.exitStatus() == 0, "stderr: \(again.standardError)")
        }
    }

    @Test("--mode l2cap needs --psm; --psm, --handle and --sdu-length are refused where they do not apply")
    func optionsAreChecked() async throws {
        let cases: [([String], String)] = [
            (["throughput", "C0:11:22:33:44:55/random", "--mode", "l2cap"], "--mode l2cap needs --psm"),
            (["throughput", "C0:11:22:33:44:55/random", "--mode", "notify", "--psm", "0x80"], "--psm is for --mode l2cap"),
            (["throughput", "C0:11:22:33:44:55/random", "--mode", "l2cap", "--psm", "0x80", "--handle", "3"], "--handle does not apply"),
            (["serve", "--db", "x.json", "--psm", "0x80"], "--psm is for --throughput"),
            (["serve", "--throughput", "--sdu-length", "100"], "--sdu-length is for --throughput --psm"),
        ]
        for (arguments, message) in cases {
            let result = try await ProcessRunner.run(try ProcessRunner.bluewire, arguments, timeout: .seconds(30))
            #expect(result.status == 64, "\(arguments): \(result.standardError)")
            #expect(result.standardError.contains(message), "\(arguments): \(result.standardError)")
        }
    }
}
