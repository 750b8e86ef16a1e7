import BluewireCore
import Foundation
import Testing
import PeerTestSupport

/// `bluewire scan` and `scan-test-advertiser` on the engine host, as processes against bumble: each
/// ends with the controller as found (its disable answered before the transport closes), so the next
/// command finds it ready whatever way the previous one ended.
extension ScanInteropTests {
    /// The lines of `bluewire decode` for a capture.
    static func decoded(_ capture: String) async throws -> [String] {
        try await ProcessRunner.run(try ProcessRunner.bluewire, ["decode", capture]).outputLines
    }

    /// Checks that the last command in `lines` is an LE Set (Extended) `what` Enable with enable=no,
    /// that the controller's Command Complete for it follows (the host waited for it), and that no
    /// command went out after it.
    static func expectEndsWithAnsweredDisable(_ lines: [String], _ what: String, _ comment: Comment) {
        let commands = lines.indices.filter { lines[$0].contains("HCI Command:") }
        guard let last = commands.last else {
            Issue.record("no command in the capture; \(comment)")
            return
        }
        #expect(lines[last].contains(" \(what) Enable") && lines[last].contains("enable=no"), "last command: \(lines[last]); \(comment)")
        let answered = lines[(last + 1)...].contains { $0.contains("Command Complete") && $0.contains(" \(what) Enable") }
        #expect(answered, "the disable's Command Complete is not in the capture: the transport closed before it; \(comment)")
    }

    @Test("a scan's duration ends with its disable answered; a scan started at once after it finds the advertiser")
    func scanRightAfterAShortScan() async throws {
        let fixture = ScanAdvertiserFixture()
        let binary = try ProcessRunner.bluewire
        try await withBumblePeer([.tcp], arguments: fixture.arguments) { peer in
            let address = try peer.peripheralAddress
            let capture = FileManager.default.temporaryDirectory.appendingPathComponent("scan-short-\(UUID().uuidString.prefix(8)).btsnoop").path
            defer { try? FileManager.default.removeItem(atPath: capture) }
            let short = try await ProcessRunner.run(binary, [
                "scan", "--transport", peer.transports[0], "--duration", "0.2", "--json", "--capture", capture,
            ])
            #expect(short.status == 0, "stderr: \(short.standardError)")
            #expect(short.standardError.isEmpty, "stderr: \(short.standardError)")
            Self.expectEndsWithAnsweredDisable(try await Self.decoded(capture), "Scan", "the short scan")

            let next = try await ProcessRunner.run(binary, ["scan", "--transport", peer.transports[0], "--duration", "1", "--json"])
            #expect(next.status == 0, "stderr: \(next.standardError)")
            #expect(next.standardOutput.contains("\"address\":\"\(address)\""), "stdout: \(next.standardOutput)")
        }
    }

    @Test("SIGINT ends a scan with status 0 after its disable was answered, and the next scan finds the advertiser")
    func interruptedScanLeavesTheControllerClean() async throws {
        let fixture = ScanAdvertiserFixture()
        try await withBumblePeer([.tcp], arguments: fixture.arguments) { peer in
            let address = try peer.peripheralAddress
            let capture = FileManager.default.temporaryDirectory.appendingPathComponent("scan-int-\(UUID().uuidString.prefix(8)).btsnoop").path
            defer { try? FileManager.default.removeItem(atPath: capture) }
            let scan = try PeripheralProcess("bluewire", ["scan", "--json", "--transport", peer.transports[0], "--capture", capture])
            defer { scan.stop() }
            try await scan.first("the advertiser's report") { $0.contains(address.hexString) }
            scan.send(signal: SIGINT)
            // Docs/CommandLine.md: scan exits 0 on SIGINT (the scan ran as long as asked).
            #expect(await scan.exitStatus() == 0, "stderr: \(scan.standardError)")
            #expect(scan.standardError.isEmpty, "stderr: \(scan.standardError)")
            Self.expectEndsWithAnsweredDisable(try await Self.decoded(capture), "Scan", "the interrupted scan")

            let next = try await ProcessRunner.run(try ProcessRunner.bluewire, [
                "scan", "--transport", peer.transports[0], "--duration", "1", "--json",
            ])
            #expect(next.status == 0, "stderr: \(next.standardError)")
            #expect(next.standardOutput.contains("\"address\":\"\(address)\""), "stdout: \(next.standardOutput)")
        }
    }

    @Test("SIGINT during bring-up, before the scan started: the scan is stopped once started (disable last, answered), status 0")
    func interruptBeforeTheScanStarted() async throws {
        let fixture = ScanAdvertiserFixture()
        try await withBumblePeer([.tcp], arguments: fixture.arguments) { peer in
            let address = try peer.peripheralAddress
            let capture = FileManager.default.temporaryDirectory.appendingPathComponent("scan-early-\(UUID().uuidString.prefix(8)).btsnoop").path
            defer { try? FileManager.default.removeItem(atPath: capture) }
            let scan = try PeripheralProcess("bluewire", [
                "scan", "--json", "--verbose", "--transport", peer.transports[0], "--capture", capture,
            ])
            defer { scan.stop() }
            // The trace (stderr) shows Reset going out: the signal handler is in place, the scan not started.
            try await waitUntil(timeout: .seconds(20)) { scan.standardError.contains("command Reset (0x0c03)") }
            scan.send(signal: SIGINT)
            #expect(await scan.exitStatus() == 0, "stderr: \(scan.standardError)")
            let lines = try await Self.decoded(capture)
            let enables = lines.filter { $0.contains("HCI Command:") && $0.contains("Scan Enable") }
            #expect(enables.last?.contains("enable=no") == true, "scan enables: \(enables)")
            Self.expectEndsWithAnsweredDisable(lines, "Scan", "the scan interrupted during bring-up")

            let next = try await ProcessRunner.run(try ProcessRunner.bluewire, [
                "scan", "--transport", peer.transports[0], "--duration", "1", "--json",
            ])
            #expect(next.status == 0, "stderr: \(next.standardError)")
            #expect(next.standardOutput.contains("\"address\":\"\(address)\""), "stdout: \(next.standardOutput)")
        }
    }

    @Test("scan-test-advertiser advertises what it was given to a scan on the same link; SIGINT disables advertising and exits 130")
    func scanTestAdvertiserIsFoundAndStopsCleanly() async throws {
        try await withBumblePeer([.tcp, .tcp], arguments: []) { peer in
            let capture = FileManager.default.temporaryDirectory.appendingPathComponent("advertiser-\(UUID().uuidString.prefix(8)).btsnoop").path
            defer { try? FileManager.default.removeItem(atPath: capture) }
            let advertiser = try PeripheralProcess("bluewire", [
                "scan-test-advertiser", "--transport", peer.transports[1], "--name", "BwTestAdv", "--uuid16", "180D",
                "--manufacturer", "FFFF:c0ffee", "--duration", "60", "--capture", capture,
            ])
            defer { advertiser.stop() }
            let line = try await advertiser.first("ADVERTISING <address>") { $0.hasPrefix("ADVERTISING ") }
            let address = String(line.dropFirst("ADVERTISING ".count))
            let ownAddress = try #require(BluetoothAddress(parsing: address), "not an address: \(line)")
            #expect(ownAddress.type == .random, "printed as commands take it: \(line)")
            #expect(ownAddress.randomKind == .static, "\(line)")

            let scan = try await ProcessRunner.run(try ProcessRunner.bluewire, [
                "scan", "--transport", peer.transports[0], "--duration", "1.5", "--json", "--address", address,
            ])
            #expect(scan.status == 0, "stderr: \(scan.standardError)")
            let json = try #require(scan.outputLines.last, "no device in: \(scan.standardOutput)")
            let device = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any], "not a JSON object: \(json)")
            #expect(device["name"] as? String == "BwTestAdv")
            #expect(device["connectable"] as? Bool == true)
            #expect((device["services"] as? [[String: Any]])?.compactMap { $0["uuid"] as? String } == ["0x180D"])
            let manufacturer = (device["manufacturer_data"] as? [[String: Any]])?.first
            #expect(manufacturer?["company"] as? String == "0xFFFF" && manufacturer?["data"] as? String == "c0ffee", "\(json)")

            advertiser.send(signal: SIGINT)
            #expect(await advertiser.exitStatus() == 130, "stderr: \(advertiser.standardError)")
            Self.expectEndsWithAnsweredDisable(try await Self.decoded(capture), "Advertising", "the advertiser")
        }
    }
}
