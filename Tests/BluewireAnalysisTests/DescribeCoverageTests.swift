import BluewireAnalysis
import BluewireCore
import BluewireSnoop
import Foundation
import Testing

/// The describer names every standard HCI command and event and decodes their parameters, on the
/// real captures of `Captures/` and on packets built from the Core specification's layouts.
@Suite struct DescribeCoverageTests {
    static func describe(_ type: HCIPacketType, _ payload: [UInt8]) -> PacketDescription {
        var describer = PacketDescriber()
        return describer.description(of: PacketDescriberTests.record(0, type, payload))
    }

    static func field(_ d: PacketDescription, _ name: String) -> PacketDescription.Value? {
        d.fields.first { $0.name == name }?.value
    }

    /// Every capture file in `Captures/`, whatever its name.
    static var captureFiles: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: AnalysisFixtures.captures.path)) ?? []
        return names.filter { !$0.hasSuffix(".json") && !$0.hasSuffix(".md") }.sorted()
    }

    /// A standard (non-vendor) opcode, event or LE subevent shown as a number instead of its name.
    static func bareNumbers(in line: String) -> Int {
        var count = 0
        if line.contains("Unknown event (0x") { count += 1 }
        if line.contains("Unknown LE subevent (0x") { count += 1 }
        var rest = Substring(line)
        while let range = rest.range(of: "OGF 0x") {
            let isVendor = rest[range.upperBound...].hasPrefix("3f")
            if !isVendor { count += 1 }
            rest = rest[range.upperBound...]
        }
        return count
    }

    /// Measured with `bluewire decode` over the 21 files of `Captures/`, counted as `bareNumbers`
    /// counts: before the btmon-depth describer (commit 5ed99d1) 333 lines held a bare standard
    /// number, 27 distinct opcodes and events (24 commands, 3 events: Write Extended Inquiry
    /// Response 0x0c52 in 152 lines, Write Inquiry Scan Activity 0x0c1e, Write Default Link Policy
    /// Settings 0x080f, Exit Sniff Mode 0x0804, LE Read Peer Resolvable Address 0x202b, Configure
    /// Data Path 0x0c83, Enhanced Flush 0x0c5f, the Enhanced Flush Complete event 0x39, ...); after,
    /// none.
    @Test func noStandardOpcodeOrEventOfAnyCaptureIsPrintedAsABareNumber() throws {
        let files = Self.captureFiles
        #expect(files.count >= 20, "\(files)")
        var bare: [String] = []
        var vendorCommands = 0
        for name in files {
            var describer = PacketDescriber()
            for record in CaptureReader.readAll(AnalysisFixtures.bytes(name)).records {
                let line = describer.description(of: record).line
                if Self.bareNumbers(in: line) > 0 { bare.append(name + ": " + line) }
                if line.contains("Vendor OGF 0x3f OCF") { vendorCommands += 1 }
            }
        }
        #expect(bare.isEmpty, "\(bare.count) lines with a bare standard opcode: \(bare.prefix(5))")
        // The Android captures hold vendor commands: they are shown as vendor, with OGF and OCF.
        #expect(vendorCommands > 0)
    }

    @Test func theCountingCatchesABareNumber() {
        #expect(Self.bareNumbers(in: "< HCI Command: OGF 0x08 OCF 0x00ff (0x20ff)") == 1)
        #expect(Self.bareNumbers(in: "< HCI Command: Vendor OGF 0x3f OCF 0x0157 (0xfd57)") == 0)
        #expect(Self.bareNumbers(in: "> HCI Event: Unknown event (0x77)") == 1)
        let unassigned = Self.describe(.command, [0xFF, 0x20, 0x00])
        #expect(Self.bareNumbers(in: unassigned.line) == 1, "\(unassigned.line)")
    }

    @Test func commandCompleteShowsReturnParameters() {
        // Read BD_ADDR: Status, BD_ADDR (Core Vol 4 Part E §7.4.6).
        let bdAddr = Self.describe(.event, [0x0E, 0x0A, 0x01, 0x09, 0x10, 0x00, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11])
        #expect(bdAddr.summary == "Command Complete (0x0e): Read BD_ADDR (0x1009) status=Success (0x00) address=11:22:33:44:55:66")
        // Read Local Version Information (§7.4.1).
        let version = Self.describe(.event, [0x0E, 0x0C, 0x01, 0x01, 0x10, 0x00, 0x0D, 0x70, 0xE1, 0x0D, 0x0F, 0x00, 0x13, 0x81])
        #expect(version.summary.contains("hci_version=13 hci_subversion=0xe170 lmp_version=13 company=0x000f lmp_subversion=0x8113"),
                "\(version.summary)")
        // LE Read Buffer Size [v1] (§7.8.2).
        let buffers = Self.describe(.event, [0x0E, 0x07, 0x01, 0x02, 0x20, 0x00, 0xFB, 0x00, 0x0F])
        #expect(buffers.summary.hasSuffix("le_acl_data_packet_length=251 total_num_le_acl_data_packets=15"), "\(buffers.summary)")
        // A failed command may return only its status: not truncated.
        let failed = Self.describe(.event, [0x0E, 0x04, 0x01, 0x09, 0x10, 0x0C])
        #expect(failed.error == nil, "\(failed.summary)")
    }

    @Test func commandParametersAreDecodedByName() {
        let disconnect = Self.describe(.command, [0x06, 0x04, 0x03, 0x40, 0x00, 0x13])
        #expect(disconnect.summary == "Disconnect (0x0406) handle=0x0040 reason=Remote User Terminated Connection (0x13)")
        let vendor = Self.describe(.command, [0x57, 0xFD, 0x02, 0xAA, 0xBB])
        #expect(vendor.summary == "Vendor OGF 0x3f OCF 0x0157 (0xfd57) parameters=aabb")
        let name = Self.describe(.command, [0x13, 0x0C, 0x05] + Array("Pix\n".utf8) + [0])
        #expect(name.line.contains(#"local_name="Pix\n""#), "\(name.line)")
        #expect(!name.line.contains("\n"))
    }

    @Test func aShortParameterBlockPrintsWhatItHasAndSaysItIsTruncated() {
        // LE Connection Update with only the handle and one interval.
        let d = Self.describe(.command, [0x13, 0x20, 0x04, 0x40, 0x00, 0x18, 0x00])
        #expect(d.summary.contains("handle=0x0040 interval_min=24"), "\(d.summary)")
        #expect(d.summary.contains("interval_max at offset 4: truncated"), "\(d.summary)")
        #expect(d.error != nil)
    }

    @Test func leMetaSubeventsAreDecoded() {
        // LE Data Length Change (§7.7.65.7).
        let d = Self.describe(.event, [0x3E, 0x0B, 0x07, 0x40, 0x00, 0xFB, 0x00, 0x48, 0x08, 0x1B, 0x00, 0x48, 0x01])
        #expect(d.summary == "LE Meta (0x3e): LE Data Length Change (0x07) handle=0x0040 max_tx_octets=251 max_tx_time=2120 max_rx_octets=27 max_rx_time=328")
        // LE Long Term Key Request (§7.7.65.5).
        let ltk = Self.describe(.event, [0x3E, 0x0D, 0x05, 0x40, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 0x34, 0x12])
        #expect(ltk.summary.hasSuffix("handle=0x0040 random_number=0x0807060504030201 ediv=0x1234"), "\(ltk.summary)")
    }

    static func acl(_ cid: UInt16, _ payload: [UInt8]) -> PacketDescription {
        let l2cap = [UInt8(payload.count & 0xFF), UInt8(payload.count >> 8), UInt8(cid & 0xFF), UInt8(cid >> 8)] + payload
        return describe(.acl, [0x40, 0x00, UInt8(l2cap.count), 0x00] + l2cap)
    }

    @Test func l2capSignalingCommandsShowEveryField() {
        let request = Self.acl(0x0005, [0x14, 0x01, 0x0A, 0x00, 0x80, 0x00, 0x40, 0x00, 0xF7, 0x00, 0xF7, 0x00, 0x0A, 0x00])
        #expect(request.summary.hasSuffix("LE Signaling LE Credit Based Connection Request identifier=1 spsm=0x0080 source_cid=0x0040 mtu=247 mps=247 initial_credits=10"),
                "\(request.summary)")
        let credit = Self.acl(0x0005, [0x16, 0x02, 0x04, 0x00, 0x40, 0x00, 0x05, 0x00])
        #expect(credit.summary.hasSuffix("Flow Control Credit Ind identifier=2 cid=0x0040 credits=5"), "\(credit.summary)")
        let reconfigure = Self.acl(0x0005, [0x19, 0x03, 0x08, 0x00, 0x00, 0x02, 0x00, 0x01, 0x40, 0x00, 0x41, 0x00])
        #expect(reconfigure.summary.hasSuffix("Credit Based Reconfigure Request identifier=3 mtu=512 mps=256 cid_0=0x0040 cid_1=0x0041"),
                "\(reconfigure.summary)")
        // Two commands in one BR/EDR C-frame.
        let two = Self.acl(0x0001, [0x0A, 0x01, 0x02, 0x00, 0x02, 0x00, 0x0A, 0x02, 0x02, 0x00, 0x03, 0x00])
        #expect(two.summary.contains("Information Request identifier=1 info_type=2 Information Request identifier=2 info_type=3"),
                "\(two.summary)")
        // JSON keys stay unique.
        #expect(Self.field(two, "info_type_2") == .integer(3))
    }

    @Test func smpCommandsShowEveryFieldAndKeysAsHex() {
        let request = Self.acl(0x0006, [0x01, 0x04, 0x00, 0x2D, 0x10, 0x0F, 0x0F])
        #expect(request.summary.hasSuffix("SMP Pairing Request io_capability=KeyboardDisplay (0x04) oob_data_flag=not present (0x00) auth_req=0x2d (bonding, MITM, SC, CT2) max_encryption_key_size=16 initiator_key_distribution=0x0f (EncKey, IdKey, SignKey, LinkKey) responder_key_distribution=0x0f (EncKey, IdKey, SignKey, LinkKey)"),
                "\(request.summary)")
        let key = Array(0..<16).map { UInt8($0) }
        let ltk = Self.acl(0x0006, [0x06] + key)
        #expect(Self.field(ltk, "long_term_key") == .string("000102030405060708090a0b0c0d0e0f"))
        #expect(Self.field(request, "max_encryption_key_size") == .integer(16))
        let security = Self.acl(0x0006, [0x0B, 0x05])
        #expect(security.summary.hasSuffix("SMP Security Request auth_req=0x05 (bonding, MITM)"), "\(security.summary)")
        let shortRequest = Self.acl(0x0006, [0x01, 0x04, 0x00])
        #expect(shortRequest.error != nil, "a cut Pairing Request is a decode error: \(shortRequest.summary)")
        let failed = Self.acl(0x0006, [0x05, 0x04])
        #expect(failed.summary.hasSuffix("SMP Pairing Failed reason=Confirm Value Failed (0x04)"), "\(failed.summary)")
        let short = Self.acl(0x0006, [0x03, 0x01, 0x02])
        #expect(short.error != nil && short.summary.contains("confirm_value"), "\(short.summary)")
    }

    @Test func monitorCapturesShowTheControllerIndexOnEveryHCILine() throws {
        let result = CaptureReader.readAll(AnalysisFixtures.bytes("bluez_monitor_btvirt.btsnoop"))
        var describer = PacketDescriber(format: .btsnoop(datalink: .linuxMonitor))
        var packets = 0
        for record in result.records where record.packet != nil {
            let d = describer.description(of: record)
            packets += 1
            #expect(d.controllerIndex != nil && d.line.contains(" [hci"), "\(d.line)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(d.json.utf8)) as? [String: Any])
            #expect(json["controller_index"] as? Int == Int(record.flags >> 16))
        }
        #expect(packets > 0)
    }

    @Test func treeShowsOneFieldPerLine() {
        let d = Self.describe(.command, [0x06, 0x04, 0x03, 0x40, 0x00, 0x13])
        let lines = d.tree.split(separator: "\n")
        #expect(lines.first.map(String.init) == d.line)
        #expect(lines.contains("        handle: 0x0040"))
        #expect(lines.contains("        reason: Remote User Terminated Connection (0x13)"))
    }
}
