import BluewireCore
import Testing
@testable import BluewireSnoop

/// A file copied while it was being written ends inside a record: the reader must hand over every
/// complete record and then say which record broke and where.
@Suite struct TruncatedCaptureTests {
    /// Where each unit (file header, record, pcapng block) ends, and how many packet records end there,
    /// computed from the length fields without the reader under test.
    struct Layout {
        /// (end offset of a unit, packet records complete at that point)
        var boundaries: [(end: Int, records: Int)] = []

        init(_ bytes: [UInt8], pcapng: Bool) {
            if pcapng {
                var offset = 0
                var records = 0
                while offset + 12 <= bytes.count {
                    // The fixture's section is little-endian.
                    let type = Self.le32(bytes, offset)
                    let length = Self.le32(bytes, offset + 4)
                    if [2, 3, 6].contains(type) { records += 1 }
                    offset += length
                    boundaries.append((offset, records))
                }
            } else {
                var offset = 16
                var records = 0
                boundaries.append((16, 0))
                while offset + 24 <= bytes.count {
                    offset += 24 + Self.be32(bytes, offset + 4)
                    records += 1
                    boundaries.append((offset, records))
                }
            }
        }

        static func le32(_ b: [UInt8], _ i: Int) -> Int {
            Int(b[i]) | Int(b[i + 1]) << 8 | Int(b[i + 2]) << 16 | Int(b[i + 3]) << 24
        }

        static func be32(_ b: [UInt8], _ i: Int) -> Int {
            Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3])
        }

        /// What reading the first `cut` bytes must give: the complete records, and the error's index and offset.
        func expectation(cut: Int) -> (records: Int, error: (index: Int, offset: Int)?) {
            var last = (end: 0, records: 0)
            for boundary in boundaries {
                if boundary.end > cut { break }
                last = boundary
            }
            if last.end == cut && cut > 0 { return (last.records, nil) }
            return (last.records, (last.records, last.end))
        }
    }

    static let truncatable = CaptureFixtures.names.filter { (CaptureFixtures.entry($0)?.frames ?? 0) > 0 }

    func check(_ name: String, _ bytes: [UInt8], full: [CaptureRecord], layout: Layout, cut: Int) {
        let expected = layout.expectation(cut: cut)
        let (records, error) = CaptureReader.readAll(Array(bytes[0..<cut]))
        #expect(records.count == expected.records, "\(name) cut at \(cut): \(records.count) records delivered")
        let prefixMatches = zip(records, full).allSatisfy { $0.offset == $1.offset && $0.data.elementsEqual($1.data) }
        #expect(prefixMatches, "\(name) cut at \(cut): delivered records differ from the full read")
        guard let want = expected.error else {
            #expect(error == nil, "\(name) cut at \(cut) is a record boundary, got \(String(describing: error))")
            return
        }
        guard let error else {
            Issue.record("\(name) cut at \(cut): expected a truncation error at record \(want.index)")
            return
        }
        #expect(error.isTruncation, "\(name) cut at \(cut): \(error)")
        #expect(error.recordIndex == want.index, "\(name) cut at \(cut): \(error)")
        #expect(error.offset == want.offset, "\(name) cut at \(cut): \(error)")
        if case .truncated(let needed, let available) = error.reason {
            #expect(available == cut - error.offset && needed > available, "\(name) cut at \(cut): \(error)")
        }
    }

    @Test(arguments: truncatable)
    func cutInTheFirstHundredBytesKeepsCompleteRecordsAndNamesTheBrokenOne(_ name: String) throws {
        let bytes = try CaptureFixtures.bytes(name)
        let full = CaptureReader.readAll(bytes).records
        let layout = Layout(bytes, pcapng: name.hasSuffix(".pcapng"))
        for cut in 0..<min(100, bytes.count) {
            check(name, bytes, full: full, layout: layout, cut: cut)
        }
    }

    @Test(arguments: truncatable)
    func cutAtRandomOffsetsKeepsCompleteRecordsAndNamesTheBrokenOne(_ name: String) throws {
        let bytes = try CaptureFixtures.bytes(name)
        let full = CaptureReader.readAll(bytes).records
        let layout = Layout(bytes, pcapng: name.hasSuffix(".pcapng"))
        var random = SplitMix64(seed: UInt64(bytes.count))
        for _ in 0..<40 {
            check(name, bytes, full: full, layout: layout, cut: Int.random(in: 100..<bytes.count, using: &random))
        }
        // The last record cut by one byte: everything but the last record, then the error.
        check(name, bytes, full: full, layout: layout, cut: bytes.count - 1)
    }

    @Test func truncationIsReportedWhenStreamingToo() throws {
        let bytes = try CaptureFixtures.bytes("horizon_treadmill_notify.btsnoop_hci.log")
        let cut = Array(bytes[0..<(bytes.count - 5)])
        let (records, error) = CaptureFixtures.readStreaming(cut, chunkSize: 1000)
        let expected = CaptureReader.readAll(cut)
        #expect(records.count == expected.records.count)
        #expect(error == expected.error)
        #expect(error?.recordIndex == 2571)
    }

    @Test func emptyInputIsATruncatedHeaderNotACrash() {
        let (records, error) = CaptureReader.readAll([])
        #expect(records.isEmpty)
        #expect(error == CaptureError(.truncated(needed: 16, available: 0), recordIndex: 0, offset: 0,
                                      field: "file header"))
    }
}
