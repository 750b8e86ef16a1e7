import BluewireAnalysis
import BluewireCore
import BluewireSnoop
import Foundation
import Testing

/// Inputs that broke an invariant of the `capture-analysis` fuzz target, kept in
/// `Fuzz/Regressions/capture-analysis/` and fed through the describer as the target feeds them.
@Suite struct FuzzRegressionAnalysisTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/Regressions/capture-analysis")

    static let inputs: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".bin") }.sorted()
    }()

    /// The target's input format: records of (meta byte, 16-bit little-endian length, bytes); meta bit 0
    /// is the direction, bits 1–3 choose an H4 packet (0–4), a Linux monitor note whose opcode is the
    /// first byte (5), an empty record (6) or a malformed packet note (7).
    static func records(_ input: [UInt8]) -> [CaptureRecord] {
        var records: [CaptureRecord] = []
        var i = 0
        while i < input.count {
            let meta = input[i]
            let lengthBytes = input[min(i + 1, input.count)..<min(i + 3, input.count)]
            let length = lengthBytes.reversed().reduce(0) { $0 << 8 | Int($1) }
            let start = min(i + 3, input.count)
            let end = min(start + length, input.count)
            let bytes = input[start..<end]
            i = max(end, i + 1)
            let content: CaptureRecord.Content
            switch (meta >> 1) & 7 {
            case 0...4:
                if let first = bytes.first, let type = HCIPacketType(rawValue: first) {
                    content = .packet(HCIPacket(type: type, payload: bytes.dropFirst()))
                } else {
                    content = .note(CaptureNote(kind: .unknownPacketType(bytes.first ?? 0), data: bytes))
                }
            case 5:
                let opcode = BTSnoopMonitorOpcode(rawValue: UInt16(bytes.first ?? 12))
                content = .note(CaptureNote(kind: .monitor(opcode, controllerIndex: 0), data: bytes.dropFirst()))
            case 6:
                content = .note(CaptureNote(kind: .emptyRecord, data: []))
            default:
                let error = DecodeError(.truncated(needed: 20, available: bytes.count), layer: "pcapng",
                                        field: "enhanced packet block", offset: 0)
                content = .note(CaptureNote(kind: .malformed(error), data: bytes))
            }
            records.append(CaptureRecord(
                index: records.count, offset: 0, direction: meta & 1 == 0 ? .hostToController : .controllerToHost,
                timestamp: 0, originalLength: UInt32(bytes.count), drops: 0, flags: 0, data: bytes, content: content))
        }
        return records
    }

    @Test("a regression input describes every record on one line, without control characters", arguments: inputs)
    func regressionInputKeepsOneLinePerRecord(name: String) throws {
        let input = try [UInt8](Data(contentsOf: Self.directory.appendingPathComponent(name)))
        let records = Self.records(input)
        #expect(!records.isEmpty, "\(name) holds no record")
        var describer = PacketDescriber()
        for record in records {
            let description = describer.description(of: record)
            let controls = description.line.unicodeScalars.filter { $0.value < 0x20 }
            #expect(controls.isEmpty, "record \(record.index) of \(name): control characters in \(description.line)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(description.json.utf8)) as? [String: Any])
            #expect(json["summary"] as? String == description.summary)
        }
    }

    @Test func monitorNoteTextIsQuotedInTheLineAndKeptVerbatimInJSON() throws {
        let text = "first\nsecond \u{1B}[2J"
        let data = Array(text.utf8) + [0]
        let record = CaptureRecord(
            index: 0, offset: 16, direction: .controllerToHost, timestamp: 0, originalLength: UInt32(data.count),
            drops: 0, flags: 0, data: data[...],
            content: .note(CaptureNote(kind: .monitor(.systemNote, controllerIndex: 0), data: data[...])))
        var describer = PacketDescriber()
        let description = describer.description(of: record)
        #expect(description.line.contains(#"text="first\nsecond \u001b[2J""#), "\(description.line)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(description.json.utf8)) as? [String: Any])
        #expect(json["text"] as? String == text)
    }
}
