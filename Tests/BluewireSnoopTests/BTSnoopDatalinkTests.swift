import BluewireCore
import Testing
@testable import BluewireSnoop

@Suite struct BTSnoopDatalinkTests {
    static func record(flags: UInt32, data: [UInt8], timestamp: UInt64 = 0x00E0_0000_0000_0001,
                       original: UInt32? = nil, drops: UInt32 = 0) -> [UInt8] {
        let be = CaptureFormatDetectionTests.be
        return be(original ?? UInt32(data.count)) + be(UInt32(data.count)) + be(flags) + be(drops)
            + be(UInt32(timestamp >> 32)) + be(UInt32(timestamp & 0xFFFF_FFFF)) + data
    }

    static func file(_ datalink: UInt32, _ records: [[UInt8]]) -> [UInt8] {
        CaptureFormatDetectionTests.btsnoopHeader(datalink: datalink) + records.flatMap { $0 }
    }

    @Test func h4TypeByteWinsOverWrongFlags() throws {
        // An event written with flags 0x10 (as some writers do) is still an event, received.
        let bytes = Self.file(1002, [Self.record(flags: 0x11, data: [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])])
        let (records, error) = CaptureReader.readAll(bytes)
        #expect(error == nil)
        let record = try #require(records.first)
        #expect(record.packet?.type == .event)
        #expect(Array(record.packet?.payload ?? []) == [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
        #expect(record.direction == .controllerToHost)
        #expect(record.offset == 16)
        #expect(record.timestamp == 0x00E0_0000_0000_0001)
    }

    @Test func emptyAndUnknownH4RecordsBecomeNotes() {
        let bytes = Self.file(1002, [Self.record(flags: 0, data: []), Self.record(flags: 0, data: [0x09, 1, 2])])
        let (records, error) = CaptureReader.readAll(bytes)
        #expect(error == nil)
        #expect(records.count == 2)
        #expect(records.first?.note?.kind == .emptyRecord)
        #expect(records.last?.note?.kind == .unknownPacketType(0x09))
        #expect(records.last?.offset == 16 + 24)
    }

    @Test func h1TakesTheTypeFromTheFlags() {
        let bytes = Self.file(1001, [
            Self.record(flags: 2, data: [0x03, 0x0C, 0x00]),
            Self.record(flags: 3, data: [0x0E, 0x01, 0x00]),
            Self.record(flags: 1, data: [0x40, 0x00, 0x00, 0x00]),
        ])
        let records = CaptureReader.readAll(bytes).records
        #expect(records.map { $0.packet?.type } == [.command, .event, .acl])
        #expect(records.map(\.direction) == [.hostToController, .controllerToHost, .controllerToHost])
        #expect(Array(records[0].packet?.payload ?? []) == [0x03, 0x0C, 0x00])
    }

    @Test func linuxMonitorOpcodesGiveHCIPacketsAndNotes() {
        let index: UInt32 = 1 << 16
        let bytes = Self.file(2001, [
            Self.record(flags: index | 0, data: [0, 0, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66] + Array("hci1\0\0\0\0".utf8)),
            Self.record(flags: index | 8, data: []),
            Self.record(flags: index | 2, data: [0x03, 0x0C, 0x00]),
            Self.record(flags: index | 3, data: [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]),
            Self.record(flags: index | 4, data: [0x40, 0x00, 0x01, 0x00, 0xAA]),
            Self.record(flags: index | 5, data: [0x40, 0x20, 0x01, 0x00, 0xBB]),
            Self.record(flags: 0xFFFF_0000 | 12, data: Array("Bluetooth subsystem\0".utf8)),
            Self.record(flags: index | 13, data: [6, 5] + Array("test\0hello\0".utf8)),
            Self.record(flags: index | 17, data: [1, 0, 0, 0]),
            Self.record(flags: index | 18, data: [0x01, 0x00, 0x00, 0x00]),
            Self.record(flags: index | 19, data: [0x01, 0x00, 0x00, 0x00]),
            Self.record(flags: index | 6, data: [0x01, 0x00, 0x00]),
        ])
        let (records, error) = CaptureReader.readAll(bytes)
        #expect(error == nil)
        #expect(records.count == 12)
        #expect(records.map { $0.packet?.type } == [nil, nil, .command, .event, .acl, .acl, nil, nil, nil, .iso, .iso, .sco])
        #expect(records[0].note?.kind == .monitor(.newIndex, controllerIndex: 1))
        #expect(records[1].note?.kind == .monitor(.openIndex, controllerIndex: 1))
        #expect(records[6].note?.kind == .monitor(.systemNote, controllerIndex: 0xFFFF))
        #expect(records[7].note?.kind == .monitor(.userLogging, controllerIndex: 1))
        #expect(records[8].note?.kind == .monitor(.controlEvent, controllerIndex: 1))
        #expect(records[4].direction == .hostToController && records[5].direction == .controllerToHost)
        #expect(records[9].direction == .hostToController && records[10].direction == .controllerToHost)
        // Monitor records carry no H4 byte: the payload is the whole record.
        #expect(Array(records[2].packet?.payload ?? []) == [0x03, 0x0C, 0x00])
    }

    @Test func unsupportedDatalinksAreReadAsNotes() {
        let bytes = Self.file(1004, [Self.record(flags: 0, data: [1, 2, 3])])
        let (records, error) = CaptureReader.readAll(bytes)
        #expect(error == nil)
        #expect(records.first?.note?.kind == .unsupportedDatalink(1004))
    }

    @Test func truncatedPacketsKeepTheirOriginalLengthAndDrops() {
        let bytes = Self.file(1002, [Self.record(flags: 1, data: [0x02, 0x40, 0x00], original: 30, drops: 7)])
        let record = CaptureReader.readAll(bytes).records.first
        #expect(record?.originalLength == 30)
        #expect(record?.isTruncatedPacket == true)
        #expect(record?.drops == 7)
    }

    @Test func timestampsAreNeverReorderedOrValidated() {
        let bytes = Self.file(1002, [
            Self.record(flags: 0, data: [0x01, 0x03, 0x0C, 0x00], timestamp: 500),
            Self.record(flags: 0, data: [0x01, 0x03, 0x0C, 0x00], timestamp: 100),
            Self.record(flags: 0, data: [0x01, 0x03, 0x0C, 0x00], timestamp: UInt64.max),
        ])
        #expect(CaptureReader.readAll(bytes).records.map(\.timestamp) == [500, 100, -1])
    }

    @Test func absurdIncludedLengthIsReportedInsteadOfBuffered() {
        var bytes = Self.file(1002, [Self.record(flags: 0, data: [0x01, 0x03, 0x0C, 0x00])])
        bytes += Self.record(flags: 0, data: [])
        bytes[16 + 28 + 4] = 0x7F  // included length of the second record: 0x7F000000
        let (records, error) = CaptureReader.readAll(bytes)
        #expect(records.count == 1)
        #expect(error == CaptureError(.recordTooLarge(length: 0x7F00_0000, limit: 1 << 20), recordIndex: 1,
                                      offset: 44, field: "included length"))
    }

    @Test func recordsAfterAnErrorAreNeverDelivered() throws {
        var reader = CaptureReader()
        reader.feed(Array("garbage!garbage!".utf8))
        reader.finishInput()
        #expect(throws: CaptureError.self) { _ = try reader.next() }
        #expect(try reader.next() == nil)
        #expect(reader.isFinished)
    }

    @Test func needsMoreInputUntilTheChunkCompletesARecord() throws {
        let bytes = Self.file(1002, [Self.record(flags: 0, data: [0x01, 0x03, 0x0C, 0x00])])
        var reader = CaptureReader()
        reader.feed(Array(bytes[0..<30]))
        #expect(try reader.next() == nil)
        #expect(!reader.isFinished)
        reader.feed(Array(bytes[30...]))
        let record = try #require(try reader.next())
        #expect(record.packet?.type == .command)
        reader.finishInput()
        #expect(try reader.next() == nil)
        #expect(reader.isFinished)
    }
}
