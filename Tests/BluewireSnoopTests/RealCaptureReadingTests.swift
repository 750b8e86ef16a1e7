import BluewireCore
import Testing
@testable import BluewireSnoop

@Suite struct RealCaptureReadingTests {
    @Test func indexListsEveryCapture() {
        #expect(CaptureFixtures.index.count == 8, "INDEX.json in Captures/ should describe the 8 captures")
    }

    @Test(arguments: CaptureFixtures.names)
    func captureReadsToItsEndWithTsharksFrameCount(_ name: String) throws {
        let entry = try #require(CaptureFixtures.entry(name))
        let bytes = try CaptureFixtures.bytes(name)
        let (records, error) = CaptureReader.readAll(bytes)
        #expect(error == nil, "\(name): \(String(describing: error))")
        #expect(records.count == entry.frames, "\(name): \(records.count) records, tshark counts \(entry.frames)")
        for (i, record) in records.enumerated() where record.index != i {
            Issue.record("\(name): record \(i) carries index \(record.index)")
            break
        }
        #expect(records.allSatisfy { $0.packet != nil }, "\(name): every record of these files is an HCI packet")
    }

    @Test(arguments: CaptureFixtures.names)
    func formatComesFromTheMagicNotTheExtension(_ name: String) throws {
        let entry = try #require(CaptureFixtures.entry(name))
        var reader = CaptureReader()
        reader.feed(try CaptureFixtures.bytes(name))
        reader.finishInput()
        _ = try reader.next()
        if entry.container == "pcapng" {
            #expect(reader.format == .pcapng)
        } else {
            #expect(reader.format == .btsnoop(datalink: BTSnoopDatalink(rawValue: UInt32(entry.datalink))))
        }
    }

    @Test(arguments: CaptureFixtures.names.filter { CaptureFixtures.entry($0)?.container == "btsnoop" })
    func packetTypesAndFlagsMatchTheIndependentStructureCheck(_ name: String) throws {
        let entry = try #require(CaptureFixtures.entry(name))
        let records = CaptureReader.readAll(try CaptureFixtures.bytes(name)).records
        var types: [String: Int] = [:]
        var flags: [String: Int] = [:]
        for record in records {
            if let packet = record.packet { types[String(packet.type.rawValue), default: 0] += 1 }
            flags[String(record.flags), default: 0] += 1
        }
        #expect(types == entry.h4TypeHistogram, "\(name): H4 types")
        #expect(flags == entry.flagsHistogram, "\(name): flags")
    }

    @Test(arguments: CaptureFixtures.names)
    func chunkSizeDoesNotChangeTheRecords(_ name: String) throws {
        let bytes = try CaptureFixtures.bytes(name)
        let whole = CaptureReader.readAll(bytes).records
        // Tiny chunks put nearly every record across a boundary; keep them to the smaller files.
        let sizes = bytes.count < 200_000 ? [1, 7, 24, 4096, 65_536] : [13, 4096, 262_144]
        for size in sizes {
            let (streamed, error) = CaptureFixtures.readStreaming(bytes, chunkSize: size)
            #expect(error == nil, "\(name) chunk \(size): \(String(describing: error))")
            #expect(streamed.count == whole.count, "\(name) chunk \(size)")
            let same = zip(streamed, whole).allSatisfy { a, b in
                a.offset == b.offset && a.timestamp == b.timestamp && a.data.elementsEqual(b.data)
                    && a.flags == b.flags && a.direction == b.direction
            }
            #expect(same, "\(name) chunk \(size): records differ from the whole-file read")
        }
    }

    @Test func headerOnlyFileIsAnEmptyCapture() throws {
        let bytes = try CaptureFixtures.bytes("oppo_earbuds_header_only.cfa")
        var reader = CaptureReader()
        reader.feed(bytes)
        reader.finishInput()
        #expect(try reader.next() == nil)
        #expect(reader.isFinished)
        #expect(reader.format == .btsnoop(datalink: .h4))
        #expect(reader.recordCount == 0)
    }

    @Test func pcapngDirectionWordGivesTheDirection() throws {
        let records = CaptureReader.readAll(try CaptureFixtures.bytes("darkelf_att_only_h4.pcapng")).records
        let sent = records.filter { $0.direction == .hostToController }
        // Every record's direction must agree with the first word of its packet data.
        for record in records {
            let word = record.data.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            #expect((word & 1 == 0) == (record.direction == .hostToController), "record \(record.index)")
        }
        #expect(!sent.isEmpty && sent.count < records.count, "the capture has both directions")
        #expect(records.allSatisfy { $0.packet?.type == .acl })
    }
}
