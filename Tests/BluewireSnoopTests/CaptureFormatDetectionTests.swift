import BluewireCore
import Testing
@testable import BluewireSnoop

@Suite struct CaptureFormatDetectionTests {
    static func btsnoopHeader(version: UInt32 = 1, datalink: UInt32) -> [UInt8] {
        CaptureFormat.btsnoopMagic + be(version) + be(datalink)
    }

    static func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    @Test func unknownMagicIsATypedError() {
        let (records, error) = CaptureReader.readAll(Array("this is not a capture file".utf8))
        #expect(records.isEmpty)
        #expect(error?.reason == .unknownFormat)
        #expect(error?.offset == 0)
    }

    @Test func classicPcapIsNotMistakenForPcapng() {
        let (_, error) = CaptureReader.readAll([0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0] + [UInt8](repeating: 0, count: 16))
        #expect(error?.reason == .unknownFormat)
    }

    @Test func btsnoopVersionOtherThanOneIsRejected() {
        let (_, error) = CaptureReader.readAll(Self.btsnoopHeader(version: 2, datalink: 1002))
        #expect(error?.reason == .unsupportedVersion(2))
    }

    @Test func detectionUsesMagicBytes() {
        #expect(CaptureFormat.detect(Self.btsnoopHeader(datalink: 2001)[...]) == .btsnoop)
        #expect(CaptureFormat.detect([0x0A, 0x0D, 0x0D, 0x0A, 0, 0][...]) == .pcapng)
        #expect(CaptureFormat.detect([0x62, 0x74][...]) == nil)
    }

    @Test func unixTimeOfABTSnoopTimestamp() {
        let unix: Int64 = 1_612_150_079_092_423
        let format = CaptureFormat.btsnoop(datalink: .h4)
        #expect(format.unixMicroseconds(BTSnoopWriter.timestamp(unixMicroseconds: unix)) == unix)
        #expect(CaptureFormat.pcapng.unixMicroseconds(unix) == unix)
    }
}
