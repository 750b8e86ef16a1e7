import BluewireAnalysis
import BluewireSnoop
import Foundation
import Testing

/// The differential oracle: Bluewire's counts against tshark's, file by file and key by key.
@Suite struct CaptureSummaryTsharkTests {
    /// The keys the summary must produce (INDEX.json's `tshark` objects, less the dissector's opinions).
    static let requiredKeys = [
        "frames", "hci_cmd_frames", "hci_evt_frames", "hci_acl_frames", "hci_sco_frames", "le_meta_subevent_hist",
        "le_adv_report_frames", "le_adv_reports_total", "le_ext_adv_report_frames", "le_ext_adv_reports_total",
        "le_conn_complete_events", "le_conn_complete_ok", "disconnection_complete", "le_data_length_change",
        "le_phy_update_complete", "att_frames", "att_opcode_hist", "smp_frames", "l2cap_le_signaling_frames",
    ]

    /// Every (file, key) pair the summary reports, so each count is its own test case.
    static let cases: [String] = AnalysisFixtures.names.flatMap { file in
        (AnalysisFixtures.summaries[file]?.fields.map(\.key) ?? []).map { file + " :: " + $0 }
    }

    /// The summary's JSON parsed back, so that the comparison also checks the hand-written encoder.
    static func parsedSummary(_ file: String) -> [String: Any]? {
        guard let summary = AnalysisFixtures.summaries[file] else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(summary.json.utf8)) as? [String: Any]
    }

    @Test(arguments: cases)
    func summaryCountEqualsTsharks(_ testCase: String) throws {
        let parts = testCase.components(separatedBy: " :: ")
        let (file, key) = (parts[0], parts[1])
        let mine = try #require(Self.parsedSummary(file), "\(file): summary JSON does not parse")
        let expected = try #require(AnalysisFixtures.tshark[file]?[key], "\(file): INDEX.json has no key \(key)")
        let actual = try #require(mine[key], "\(file): summary has no key \(key)")
        #expect(
            NSDictionary(dictionary: ["v": actual]).isEqual(to: ["v": expected]),
            "\(file) \(key): expected \(expected) (tshark), actual \(actual)")
    }

    @Test func everyCaptureIsCompared() {
        #expect(AnalysisFixtures.names.count == 8)
        #expect(Self.cases.count == 8 * 21)
    }

    @Test(arguments: AnalysisFixtures.names)
    func summaryHasExactlyTheIndexKeysInIndexOrder(_ file: String) throws {
        let summary = try #require(AnalysisFixtures.summaries[file])
        let keys = summary.fields.map(\.key)
        for key in Self.requiredKeys {
            #expect(keys.contains(key), "\(file): summary lacks \(key)")
        }
        let indexKeys = try #require(AnalysisFixtures.tshark[file]).keys
        for key in keys {
            #expect(indexKeys.contains(key), "\(file): \(key) is not a key of INDEX.json")
        }
        // The JSON text lists keys in INDEX.json's order.
        let positions = keys.compactMap { summary.json.range(of: "\"\($0)\":")?.lowerBound }
        #expect(positions == positions.sorted())
    }

    @Test func streamingSummaryEqualsWholeFileSummary() {
        let bytes = AnalysisFixtures.bytes("pongbot_gatt_rich.btsnoop_hci.log.last")
        var reader = CaptureReader()
        var summary = CaptureSummary()
        var start = 0
        while start < bytes.count {
            let end = min(start + 997, bytes.count)
            reader.feed(Array(bytes[start..<end]))
            start = end
            if start == bytes.count { reader.finishInput() }
            while let record = try? reader.next() { summary.add(record) }
        }
        #expect(summary.json == AnalysisFixtures.summaries["pongbot_gatt_rich.btsnoop_hci.log.last"]?.json)
    }
}
