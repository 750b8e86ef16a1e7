import BluewireCore
import Foundation
import Testing
@testable import BluewireSnoop

@Suite struct BTSnoopWriterTests {
    static let h4Files = CaptureFixtures.names.filter { CaptureFixtures.entry($0)?.datalink == 1002 }

    /// Writes every packet of `records` with the writer, as the capture tap would.
    static func rewrite(_ records: [CaptureRecord]) -> [UInt8] {
        let writer = BTSnoopWriter()
        var out = writer.fileHeader
        for record in records {
            guard let packet = record.packet else { continue }
            writer.appendRecord(packet, direction: record.direction, timestamp: record.timestamp,
                                originalLength: record.originalLength, drops: record.drops, to: &out)
        }
        return out
    }

    @Test(arguments: h4Files)
    func decodeThenWriteGivesTheSameBytes(_ name: String) throws {
        let bytes = try CaptureFixtures.bytes(name)
        let written = Self.rewrite(CaptureReader.readAll(bytes).records)
        #expect(written.count == bytes.count, "\(name): \(written.count) bytes written, \(bytes.count) read")
        if let first = zip(written, bytes).enumerated().first(where: { $0.element.0 != $0.element.1 }) {
            Issue.record("\(name): first difference at byte \(first.offset)")
        }
    }

    @Test func flagsFollowTheBTSnoopDefinition() {
        #expect(BTSnoopWriter.flags(for: .command, direction: .hostToController) == 2)
        #expect(BTSnoopWriter.flags(for: .event, direction: .controllerToHost) == 3)
        #expect(BTSnoopWriter.flags(for: .acl, direction: .hostToController) == 0)
        #expect(BTSnoopWriter.flags(for: .acl, direction: .controllerToHost) == 1)
        #expect(BTSnoopWriter.flags(for: .sco, direction: .controllerToHost) == 1)
        #expect(BTSnoopWriter.flags(for: .iso, direction: .hostToController) == 0)
    }

    @Test func headerIsBTSnoopVersionOneDatalink1002() {
        let header = BTSnoopWriter().fileHeader
        #expect(header == Array("btsnoop".utf8) + [0, 0, 0, 0, 1, 0, 0, 0x03, 0xEA])
        let (records, error) = CaptureReader.readAll(header)
        #expect(records.isEmpty && error == nil)
    }

    @Test func writtenRecordReadsBack() throws {
        let writer = BTSnoopWriter()
        let packet = HCIPacket(type: .acl, payload: [0x40, 0x00, 0x05, 0x00, 0x01, 0x00, 0x04, 0x00, 0x0A])
        let bytes = writer.fileHeader + writer.record(packet, direction: .controllerToHost, timestamp: 42)
        let record = try #require(CaptureReader.readAll(bytes).records.first)
        #expect(record.packet == packet)
        #expect(record.direction == .controllerToHost)
        #expect(record.timestamp == 42)
        #expect(record.flags == 1)
        #expect(record.originalLength == 10)
    }

    /// The pcapng capture converted to btsnoop must decode in tshark exactly as well as the original.
    @Test(arguments: CaptureFixtures.names.filter { (CaptureFixtures.entry($0)?.frames ?? 0) > 0 })
    func writtenFileDecodesInTsharkWithoutNewMalformedFrames(_ name: String) throws {
        let entry = try #require(CaptureFixtures.entry(name))
        let records = CaptureReader.readAll(try CaptureFixtures.bytes(name)).records
        let written = Self.rewrite(records)
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("bluewire-writer-\(UUID().uuidString).btsnoop")
        try Data(written).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        guard let malformed = try runTool("tshark", ["-n", "-r", url.path, "-Y", "_ws.malformed", "-T", "fields",
                                                     "-e", "frame.number"]) else {
            if isCI { Issue.record("tshark is not on PATH but CI=true: the writer cannot be checked against it") }
            return
        }
        guard let frames = try runTool("tshark", ["-n", "-r", url.path, "-T", "fields", "-e", "frame.number"]) else {
            return
        }
        let frameCount = frames.split(separator: "\n").count
        let malformedCount = malformed.split(separator: "\n").count
        #expect(frameCount == entry.frames, "\(name): tshark reads \(frameCount) frames from the written file")
        #expect(malformedCount <= entry.malformedFrames,
                "\(name): \(malformedCount) malformed frames in the written file, \(entry.malformedFrames) in the source")
    }
}
