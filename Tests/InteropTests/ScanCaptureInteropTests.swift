import Bluewire
import BluewireCore
import Foundation
import Testing
import PeerTestSupport

extension ScanInteropTests {
    /// `--capture` during a bumble scan session (CaptureTap, btsnoop 1002): tshark decodes it with no
    /// malformed frame among Bluewire's own packets, and `bluewire decode --summary` counts what
    /// tshark counts.
    @Test("a capture recorded during a bumble scan decodes with tshark and bluewire decode alike",
          arguments: ReportFormat.allCases)
    func scanCaptureDecodesWithTsharkAndBluewire(reports: ReportFormat) async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("scan-\(UUID().uuidString.prefix(8)).btsnoop").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await withScanningHost(.tcp, extraArguments: reports.arguments, capture: path) { underTest, peer in
            let device = try await underTest.find(peer.peripheralAddress)
            #expect(device != nil, "bumble's advertiser not found")
        }
        try await expectCaptureAgreesWithTshark(path)
        let tshark = try await TsharkCounts.read(path)
        #expect(tshark.count { $0.leSubevent == Int(reports.subevent) } > 0, "no \(reports) reports in the capture")
    }

    /// The capture committed as `Captures/bluewire_scan_bumble.btsnoop` (recorded with
    /// `bluewire scan --capture` against bumble_link.py; see Captures/README.md) stays well-formed.
    @Test("the committed bumble scan capture decodes with tshark and bluewire decode alike")
    func committedScanCaptureAgreesWithTshark() async throws {
        let path = BumblePeer.repositoryRoot.appendingPathComponent("Captures/bluewire_scan_bumble.btsnoop").path
        try #require(FileManager.default.fileExists(atPath: path), "\(path) is missing")
        try await expectCaptureAgreesWithTshark(path)
    }
}
