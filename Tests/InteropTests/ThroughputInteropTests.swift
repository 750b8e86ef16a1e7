import BluewireCore
import Foundation
import Testing
import PeerTestSupport

/// `bluewire throughput` against `bluewire serve --throughput`, both processes Bluewire, each on its
/// own bumble controller of one `LocalLink` (fresh per test). The controllers report 251-octet LE ACL
/// buffers, so a 247-octet ATT PDU leaves in one ACL packet. bumble moves data as fast as Python can
/// (no radio timing), so the figures are the stack's, not a radio's: the tests check that every
/// packet arrives in order and that the tool reports a rate, never how fast it was.
@Suite("Throughput: bluewire throughput against bluewire serve --throughput over bumble")
struct ThroughputInteropTests {
    /// Runs `bluewire throughput` for 2 s in `mode` against a fresh throughput peer; returns its
    /// parsed JSON report, its stderr, and the peer's output lines.
    static func measure(_ mode: String, extra: [String] = []) async throws -> (report: [String: Any], stderr: String, peer: [String]) {
        let address = newStaticAddress()
        return try await withBumblePeer([.tcp, .tcp], arguments: ["--acl-buffer", "251"]) { peer in
            let server = try PeripheralProcess("bluewire", [
                "serve", "--throughput", "--json", "--transport", peer.transports[0], "--own-address", address.hexString,
            ])
            defer { server.stop() }
            try await server.first("the throughput peer's service line") { $0.contains("\"throughput-service\"") }
            let result = try await ProcessRunner.run(try ProcessRunner.bluewire, [
                "throughput", "\(address)", "--mode", mode, "--mtu", "247", "--duration", "2", "--json",
                "--transport", peer.transports[1],
            ] + extra, timeout: .seconds(60))
            #expect(result.status == 0, "stderr: \(result.standardError)")
            let line = try #require(result.outputLines.last, "no report on stdout; stderr: \(result.standardError)")
            let report = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not JSON: \(line)")
            // The central disconnected after the run: the peer reports the link gone.
            try await server.first("the central's disconnection") { $0.contains("\"disconnected\"") }
            server.send(signal: SIGTERM)
            #expect(await server.exitStatus() == 0, "serve stderr: \(server.standardError)")
            return (report, result.standardError, await server.lines.events)
        }
    }

    static func int(_ value: Any?) -> Int? { (value as? NSNumber)?.intValue }
    static func double(_ value: Any?) -> Double? { (value as? NSNumber)?.doubleValue }

    /// What every mode must show: a positive rate, packets, ATT_MTU 247, no loss, no reordering, and
    /// progress lines on stderr.
    static func checkCommon(_ report: [String: Any], stderr: String, mode: String) {
        #expect(report["mode"] as? String == mode)
        expectSnakeCaseKeys(report)
        // The report always says which PHY the link used.
        let phy = report["phy"] as? [String: Any]
        #expect(phy?["tx"] is String && phy?["rx"] is String, "\(report)")
        #expect(int(report["mtu"]) == 247, "both sides offered 247")
        #expect((int(report["packets"]) ?? 0) > 0)
        #expect((double(report["kilobits_per_second"]) ?? 0) > 0)
        #expect((double(report["packets_per_second"]) ?? 0) > 0)
        #expect(int(report["lost"]) == 0, "\(report)")
        #expect(int(report["out_of_order"]) == 0, "\(report)")
        // Measured rates are rounded to one decimal, not printed with every digit of a Double.
        for key in ["kilobits_per_second", "packets_per_second"] {
            let text = "\(report[key] ?? "")"
            let decimals = text.split(separator: ".", omittingEmptySubsequences: false).dropFirst().first?.count ?? 0
            #expect(decimals <= 1, "\(key): \(text)")
        }
        // stderr is not a terminal here: one progress line per second, each with rate and packets.
        let progress = stderr.split(separator: "\n").filter { $0.contains("kbit/s") && $0.contains("packets") }
        #expect(!progress.isEmpty, "no progress line on stderr: \(stderr)")
        print("bumble link, \(mode): \(report)")
    }

    @Test(.timeLimit(.minutes(2)))
    func notificationsArriveWithoutLossOrReordering() async throws {
        let (report, stderr, peer) = try await Self.measure("notify")
        Self.checkCommon(report, stderr: stderr, mode: "notify")
        #expect(Self.int(report["payload_length"]) == 244, "ATT_MTU - 3")
        #expect(Self.int(report["octets"]) == (Self.int(report["packets"]) ?? 0) * 244)
        #expect(report["latency_microseconds"] == nil)
        #expect(peer.contains { $0.contains("\"stream-started\"") })
        let stopped = peer.compactMap { line -> Int? in
            guard line.contains("\"stream-stopped\""),
                  let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return Self.int(object["notifications"])
        }
        #expect(stopped.count == 1)
        #expect((stopped.first ?? 0) >= (Self.int(report["packets"]) ?? .max), "the peer sent at least what arrived")
    }

    @Test(.timeLimit(.minutes(2)))
    func writesWithoutResponseAllReachTheSink() async throws {
        let (report, stderr, peer) = try await Self.measure("write-without-response")
        Self.checkCommon(report, stderr: stderr, mode: "write-without-response")
        #expect(Self.int(report["sent"]) == Self.int(report["packets"]), "the sink counted every write sent")
        #expect(peer.contains { $0.contains("\"sink-reset\"") })
    }

    @Test(.timeLimit(.minutes(2)))
    func writeRequestsAreAnsweredWithLatencyPercentiles() async throws {
        let (report, stderr, _) = try await Self.measure("write")
        Self.checkCommon(report, stderr: stderr, mode: "write")
        #expect(Self.int(report["sent"]) == Self.int(report["packets"]))
        let latency = try #require(report["latency_microseconds"] as? [String: Any])
        let p50 = Self.int(latency["p50"]) ?? -1, p90 = Self.int(latency["p90"]) ?? -1, p99 = Self.int(latency["p99"]) ?? -1
        #expect(p50 > 0 && p50 <= p90 && p90 <= p99, "\(latency)")
        #expect(Self.int(latency["samples"]) == Self.int(report["sent"]))
    }

    /// bumble's controller (0.0.236) never completes an LE Set PHY: the measurement runs on the PHY the
    /// link has, the report names it, and stderr warns that the change did not happen.
    @Test(.timeLimit(.minutes(2)))
    func aPHYChangeThatDoesNotHappenIsAWarningAndTheReportNamesThePHYUsed() async throws {
        let (report, stderr, _) = try await Self.measure("notify", extra: ["--phy", "2m"])
        Self.checkCommon(report, stderr: stderr, mode: "notify")
        let phy = try #require(report["phy"] as? [String: Any])
        if phy["tx"] as? String != "2m" || phy["rx"] as? String != "2m" {
            let warnings = stderr.split(separator: "\n").filter { $0.hasPrefix("bluewire: warning: the PHY did not change to 2m") }
            #expect(warnings.count == 1, "stderr: \(stderr)")
            #expect(warnings.first?.contains("measured on LE \((phy["tx"] as? String ?? "?").uppercased())") == true, "\(warnings)")
        } else {
            #expect(!stderr.contains("warning"), "the PHY changed: no warning")
        }
    }
}
