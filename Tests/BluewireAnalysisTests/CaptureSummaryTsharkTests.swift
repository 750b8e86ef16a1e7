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

/// Where tshark's count is arguably wrong but matched on purpose.
///
/// In `oppo_earbuds_dualmode.cfa`, every ATT (1), SMP (2) and LE signaling (2) frame tshark counts is
/// on ACL handle 0x0EDC, which is never connected and carries ~500-byte vendor diagnostics: records
/// #349 and #712 (CID 5), #350 and #713 (CID 6) and #710 (CID 4, an "ATT Read Request" with 475
/// trailing bytes). They are not Bluetooth traffic, but tshark decodes fixed channels on any handle and
/// so does the summary, so that the keys stay comparable. The describer shows the damage instead.
@Suite struct TsharkArtifactTests {
    @Test func vendorDiagnosticsOnHandle0EDCAreCountedAsTsharkDoesAndFlaggedInTheDescription() {
        let records = CaptureReader.readAll(AnalysisFixtures.bytes("oppo_earbuds_dualmode.cfa")).records
        var describer = PacketDescriber()
        var descriptions: [Int: PacketDescription] = [:]
        for record in records { descriptions[record.index] = describer.description(of: record) }
        for index in [349, 350, 710, 712, 713] {
            #expect(descriptions[index]?.summary.hasPrefix("handle 0x0edc") == true,
                    "#\(index): \(descriptions[index]?.summary ?? "missing")")
        }
        #expect(descriptions[710]?.summary.contains("ATT Read Request") == true)
        #expect(descriptions[710]?.error != nil, "the 'ATT' PDU on the vendor handle is malformed")
        let summary = AnalysisFixtures.summaries["oppo_earbuds_dualmode.cfa"]
        #expect(summary?.attFrames == 1 && summary?.smpFrames == 2 && summary?.l2capLESignalingFrames == 2)
    }
}
