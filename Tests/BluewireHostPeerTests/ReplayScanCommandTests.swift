import Foundation
import HostTestSupport
import Testing

/// `bluewire replay FILE -- scan ...` as a process, against the scan capture `bluewire scan
/// --duration 1 --capture` recorded with bumble (`Captures/bluewire_scan_bumble.btsnoop`).
@Suite("bluewire replay -- scan")
struct ReplayScanCommandTests {
    static let capture = ReplayFixtures.captures.appendingPathComponent("bluewire_scan_bumble.btsnoop").path

    @Test("the recorded scan runs again unchanged; its one-second duration elapses in capture time")
    func recordedScanReplays() async throws {
        let run = try await ReplayServeCommandTests.start(["replay", Self.capture, "--", "scan", "--duration", "1", "--json"])
            .finish(.seconds(60))
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stderr.isEmpty)
        let devices = run.stdout.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(!devices.isEmpty && devices.count == run.stdout.count, "\(run.stdout)")
        #expect(devices.allSatisfy { $0["name"] as? String == "BluewireScan" }, "\(run.stdout)")
    }

    @Test("a scan that differs from the recording (passive instead of active) fails at LE Set Scan Parameters")
    func differentScanFails() async throws {
        let run = try await ReplayServeCommandTests.start(["replay", Self.capture, "--", "scan", "--duration", "1", "--passive"])
            .finish(.seconds(60))
        #expect(run.status == 1)
        // Record 20 is LE Set Scan Parameters; its LE_Scan_Type octet (after opcode and length) differs.
        #expect(run.stderr.contains("replay mismatch at record 20: the host sent different bytes (first difference at byte 4)"),
                "stderr: \(run.stderr)")
        #expect(run.stderr.contains("expected 01 0b 20 07 01") && run.stderr.contains("actual 01 0b 20 07 00"), "stderr: \(run.stderr)")
        // The last line is the mismatch itself, not what followed from it.
        let last = run.stderr.split(separator: "\n").last ?? ""
        #expect(last.hasPrefix("bluewire: ") && last.contains("replay mismatch at record 20"), "stderr: \(run.stderr)")
    }

    @Test("a command that takes no transport is refused with one line on stderr")
    func nonLiveCommandIsRefused() async throws {
        let run = try await ReplayServeCommandTests.start(["replay", Self.capture, "--", "decode", Self.capture]).finish(.seconds(60))
        #expect(run.status == 1)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr == "bluewire: 'decode \(Self.capture)' takes no --transport: replay runs live commands (scan, gatt, serve, throughput)\n")
    }
}
