import BluewireCore
import Testing
@testable import BluewireSnoop

/// Synthetic pcapng files in both byte orders, built here from the pcapng specification's block layouts.
@Suite struct PcapngReadingTests {
    struct Builder {
        var littleEndian: Bool
        var bytes: [UInt8] = []

        func u32(_ v: UInt32) -> [UInt8] {
            let le = [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)]
            return littleEndian ? le : le.reversed()
        }

        func u16(_ v: UInt16) -> [UInt8] {
            littleEndian ? [UInt8(v & 0xFF), UInt8(v >> 8)] : [UInt8(v >> 8), UInt8(v & 0xFF)]
        }

        func padded(_ data: [UInt8]) -> [UInt8] { data + [UInt8](repeating: 0, count: (4 - data.count % 4) % 4) }

        mutating func block(_ type: UInt32, _ body: [UInt8]) {
            let length = UInt32(12 + body.count)
            bytes += u32(type) + u32(length) + body + u32(length)
        }

        mutating func sectionHeader() {
            block(0x0A0D_0D0A, u32(0x1A2B_3C4D) + u16(1) + u16(0) + [UInt8](repeating: 0xFF, count: 8))
        }

        mutating func interface(linkType: UInt16, options: [UInt8] = []) {
            block(1, u16(linkType) + u16(0) + u32(0) + options)
        }

        mutating func enhancedPacket(interface: UInt32, time: UInt64, data: [UInt8], options: [UInt8] = []) {
            block(6, u32(interface) + u32(UInt32(time >> 32)) + u32(UInt32(time & 0xFFFF_FFFF))
                + u32(UInt32(data.count)) + u32(UInt32(data.count)) + padded(data) + options)
        }
    }

    static let event: [UInt8] = [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]

    @Test(arguments: [true, false])
    func enhancedPacketsInEitherByteOrder(littleEndian: Bool) throws {
        var b = Builder(littleEndian: littleEndian)
        b.sectionHeader()
        b.interface(linkType: 201)
        b.block(0x0000_0BAD, [1, 2, 3, 4])  // an unknown block is skipped
        b.enhancedPacket(interface: 0, time: 1_700_000_000_000_001, data: [0, 0, 0, 1] + Self.event)
        b.enhancedPacket(interface: 0, time: 5, data: [0, 0, 0, 0, 0x01, 0x03, 0x0C, 0x00])
        let (records, error) = CaptureReader.readAll(b.bytes)
        #expect(error == nil)
        #expect(records.count == 2)
        #expect(records[0].packet?.type == .event)
        #expect(records[0].direction == .controllerToHost)
        #expect(records[0].timestamp == 1_700_000_000_000_001)
        #expect(Array(records[0].packet?.payload ?? []) == Array(Self.event.dropFirst()))
        #expect(records[1].packet?.type == .command)
        #expect(records[1].direction == .hostToController)
        #expect(records.map(\.index) == [0, 1])
    }

    @Test func timestampResolutionOptionIsApplied() {
        var b = Builder(littleEndian: true)
        b.sectionHeader()
        // if_tsresol = 9 (nanoseconds), then a second interface with 2^-10 s.
        b.interface(linkType: 201, options: b.u16(9) + b.u16(1) + [9, 0, 0, 0] + [0, 0, 0, 0])
        b.interface(linkType: 201, options: b.u16(9) + b.u16(1) + [0x8A, 0, 0, 0] + [0, 0, 0, 0])
        b.enhancedPacket(interface: 0, time: 3_000_000_123, data: [0, 0, 0, 1] + Self.event)
        b.enhancedPacket(interface: 1, time: 2048, data: [0, 0, 0, 1] + Self.event)
        let records = CaptureReader.readAll(b.bytes).records
        #expect(records.map(\.timestamp) == [3_000_000, 2_000_000])
    }

    @Test func flagsAndDropCountOptionsAreReported() {
        var b = Builder(littleEndian: true)
        b.sectionHeader()
        b.interface(linkType: 187)  // plain H4: direction from epb_flags
        let options = b.u16(2) + b.u16(4) + b.u32(2) + b.u16(4) + b.u16(8) + b.u32(9) + b.u32(0) + [0, 0, 0, 0]
        b.enhancedPacket(interface: 0, time: 0, data: [0x01, 0x03, 0x0C, 0x00], options: options)
        let record = CaptureReader.readAll(b.bytes).records.first
        #expect(record?.flags == 2)
        #expect(record?.direction == .hostToController)
        #expect(record?.drops == 9)
        #expect(record?.packet?.type == .command)
    }

    @Test func simplePacketAndUnknownInterfaceAndLinkType() {
        var b = Builder(littleEndian: true)
        b.sectionHeader()
        b.interface(linkType: 1)  // Ethernet: not decoded
        b.block(3, b.u32(3) + b.padded([1, 2, 3]))
        b.enhancedPacket(interface: 7, time: 0, data: [1])
        let records = CaptureReader.readAll(b.bytes).records
        #expect(records.count == 2)
        #expect(records[0].note?.kind == .unsupportedLinkType(1))
        #expect(Array(records[0].data) == [1, 2, 3])
        #expect(records[1].note?.kind == .unknownInterface(7))
    }

    @Test func inconsistentCapturedLengthIsANoteAndReadingGoesOn() {
        var b = Builder(littleEndian: true)
        b.sectionHeader()
        b.interface(linkType: 201)
        b.block(6, b.u32(0) + b.u32(0) + b.u32(0) + b.u32(500) + b.u32(500) + [0, 0, 0, 1])
        b.enhancedPacket(interface: 0, time: 0, data: [0, 0, 0, 1] + Self.event)
        let (records, error) = CaptureReader.readAll(b.bytes)
        #expect(error == nil)
        #expect(records.count == 2)
        if case .malformed(let decodeError)? = records[0].note?.kind {
            #expect(decodeError.reason == .lengthMismatch(declared: 500, actual: 4))
        } else {
            Issue.record("expected a malformed note, got \(String(describing: records[0].note?.kind))")
        }
        #expect(records[1].packet?.type == .event)
    }

    @Test func brokenBlockFramingIsATypedError() {
        var b = Builder(littleEndian: true)
        b.sectionHeader()
        let sectionEnd = b.bytes.count
        b.interface(linkType: 201)
        b.bytes[sectionEnd + 4] = 13  // block total length not a multiple of 4
        let (_, error) = CaptureReader.readAll(b.bytes)
        #expect(error?.reason == .malformedBlock(.invalidValue(13)))
        #expect(error?.offset == sectionEnd)

        var c = Builder(littleEndian: true)
        c.sectionHeader()
        c.bytes[8] = 0x00  // byte-order magic
        #expect(CaptureReader.readAll(c.bytes).error?.reason == .malformedBlock(.badMagic))
    }

    @Test func newSectionResetsInterfacesAndByteOrder() {
        var b = Builder(littleEndian: true)
        b.sectionHeader()
        b.interface(linkType: 201)
        b.enhancedPacket(interface: 0, time: 1, data: [0, 0, 0, 1] + Self.event)
        var big = Builder(littleEndian: false)
        big.sectionHeader()
        big.interface(linkType: 201)
        big.enhancedPacket(interface: 0, time: 2, data: [0, 0, 0, 0, 0x01, 0x03, 0x0C, 0x00])
        let (records, error) = CaptureReader.readAll(b.bytes + big.bytes)
        #expect(error == nil)
        #expect(records.map(\.timestamp) == [1, 2])
        #expect(records.map { $0.packet?.type } == [.event, .command])
    }
}
