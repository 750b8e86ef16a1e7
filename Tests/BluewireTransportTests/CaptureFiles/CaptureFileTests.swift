import BluewireCore
import BluewireSnoop
import Foundation
import Testing
@testable import BluewireTransport

@Suite struct CaptureFileTests {
    static let captures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Captures")

    static func temporaryPath(_ suffix: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("bluewire-\(UUID().uuidString)\(suffix)").path
    }

    @Test(arguments: [
        ("happyleaf_classic_spp_large.btsnoop_hci.log", 75_997),
        ("darkelf_att_only_h4.pcapng", 122),
        ("oppo_earbuds_header_only.cfa", 0),
    ])
    func fileReaderDeliversEveryRecordInChunks(_ name: String, _ frames: Int) throws {
        let path = Self.captures.appendingPathComponent(name).path
        // A small chunk size makes many records straddle chunk boundaries.
        let file = try CaptureFileReader(path: path, chunkSize: 4096)
        var count = 0
        var lastOffset = -1
        while let record = try file.next() {
            #expect(record.index == count && record.offset > lastOffset)
            lastOffset = record.offset
            count += 1
        }
        #expect(count == frames, "\(name)")
        #expect(try file.next() == nil)
        #expect(file.format != nil)
    }

    @Test func missingFileIsATypedError() {
        #expect(throws: CaptureFileError.cannotOpen(path: "/nonexistent/capture.log", errno: ENOENT)) {
            _ = try CaptureFileReader(path: "/nonexistent/capture.log")
        }
    }

    @Test func directoryIsAReadError() throws {
        let file = try CaptureFileReader(path: FileManager.default.temporaryDirectory.path)
        #expect(throws: CaptureFileError.readFailed(path: FileManager.default.temporaryDirectory.path, errno: EISDIR)) {
            _ = try file.next()
        }
    }

    @Test func truncatedFileGivesRecordsThenTheError() throws {
        let source = try Data(contentsOf: Self.captures.appendingPathComponent("horizon_treadmill_notify.btsnoop_hci.log"))
        let path = Self.temporaryPath(".log")
        try source.prefix(source.count - 3).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let file = try CaptureFileReader(path: path, chunkSize: 1000)
        var count = 0
        do {
            while try file.next() != nil { count += 1 }
            Issue.record("expected a truncation error")
        } catch {
            guard case .capture(_, let captureError) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(captureError.isTruncation)
            #expect(captureError.recordIndex == 2571)
            #expect(count == 2571)
        }
        #expect(try file.next() == nil)
    }

    @Test func writerOutputReadsBackIdentically() throws {
        let path = Self.temporaryPath(".btsnoop")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try CaptureFileWriter(path: path, flushThreshold: 100)
        let packets = (0..<50).map { i in
            HCIPacket(type: i % 2 == 0 ? .command : .event, payload: [UInt8(i), 0x0C, 0x00])
        }
        for (i, packet) in packets.enumerated() {
            try writer.write(packet, direction: i % 2 == 0 ? .hostToController : .controllerToHost,
                             timestamp: BTSnoopWriter.timestamp(unixMicroseconds: Int64(i)))
        }
        try writer.close()
        let file = try CaptureFileReader(path: path)
        var read: [HCIPacket] = []
        while let record = try file.next() {
            if let packet = record.packet { read.append(packet) }
            #expect(record.flags == (record.index % 2 == 0 ? 2 : 3))
        }
        #expect(read == packets)
        #expect(throws: CaptureFileError.self) {
            try writer.write(packets[0], direction: .hostToController, timestamp: 0)
        }
    }

    /// A real failing device, not a fake: every write(2) to /dev/full fails with ENOSPC. The writes
    /// happen on the writer's I/O queue, so the failure is reported by a later call.
    @Test func writerReportsABackgroundWriteFailure() throws {
        let writer = try CaptureFileWriter(path: "/dev/full", flushThreshold: 64)
        let packet = HCIPacket(type: .event, payload: [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
        var failure: CaptureFileError?
        do throws(CaptureFileError) {
            for i in 0..<100 { try writer.write(packet, direction: .controllerToHost, timestamp: Int64(i)) }
            try writer.close()
        } catch {
            failure = error
        }
        #expect(failure == .writeFailed(path: "/dev/full", errno: ENOSPC))
    }

    @Test func writerReportsAnUnwritablePath() {
        #expect(throws: CaptureFileError.cannotOpen(path: "/nonexistent/dir/out.btsnoop", errno: ENOENT)) {
            _ = try CaptureFileWriter(path: "/nonexistent/dir/out.btsnoop")
        }
    }
}
