import Testing
import BluewireCore

@Suite struct ByteReaderTests {
    @Test func readsLittleEndianFieldsInOrder() throws {
        var reader = ByteReader([0x01, 0x34, 0x12, 0x78, 0x56, 0x34, 0x12, 0xAA])
        #expect(try reader.readUInt8("a") == 0x01)
        #expect(try reader.readUInt16("b") == 0x1234)
        #expect(try reader.readUInt32("c") == 0x1234_5678)
        #expect(reader.remainingCount == 1)
    }

    @Test func truncatedReadNamesFieldAndOffset() {
        var reader = ByteReader([0x01, 0x02, 0x03], layer: "hci")
        _ = try? reader.readUInt16("opcode")
        #expect(throws: DecodeError(.truncated(needed: 4, available: 1), layer: "hci", field: "length", offset: 2)) {
            _ = try reader.readUInt32("length")
        }
    }

    @Test func sliceReadsShareIndicesOfTheSource() throws {
        let bytes: [UInt8] = [9, 8, 7, 6, 5]
        var reader = ByteReader(bytes[1...])
        let s = try reader.readBytes(3, "x")
        #expect(Array(s) == [8, 7, 6])
        #expect(reader.offset == 3)
    }

    @Test func bigEndianReadsForFileHeaders() throws {
        var reader = ByteReader([0, 0, 3, 0xEA, 0, 0, 0, 0, 0, 0, 0, 1])
        #expect(try reader.readUInt32BigEndian("datalink") == 1002)
        #expect(try reader.readUInt64BigEndian("ts") == 1)
    }

    @Test func writerRoundTripsThroughReader() throws {
        var w = ByteWriter()
        w.append(UInt8(7)); w.append(UInt16(0xBEEF)); w.append(UInt32(0xDEAD_BEEF)); w.appendBigEndian(UInt32(1002))
        var r = ByteReader(w.bytes)
        #expect(try r.readUInt8("a") == 7)
        #expect(try r.readUInt16("b") == 0xBEEF)
        #expect(try r.readUInt32("c") == 0xDEAD_BEEF)
        #expect(try r.readUInt32BigEndian("d") == 1002)
        try r.expectEnd("end")
    }
}

@Suite struct AddressAndUUIDTests {
    @Test func addressTextRoundTrips() throws {
        let a = try #require(BluetoothAddress(parsing: "C0:11:22:33:44:55/random"))
        #expect(a.type == .random)
        #expect(a.randomKind == .static)
        #expect(a.description == "C0:11:22:33:44:55/random")
        #expect(a.littleEndianBytes == [0x55, 0x44, 0x33, 0x22, 0x11, 0xC0])
        #expect(BluetoothAddress(parsing: "00:11:22:33:44") == nil)
        #expect(BluetoothAddress(parsing: "00:11:22:33:44:GG") == nil)
        #expect(BluetoothAddress(parsing: "00:11:22:33:44:55/bogus") == nil)
    }

    @Test func readerDecodesWireOrderAddress() throws {
        var r = ByteReader([0x55, 0x44, 0x33, 0x22, 0x11, 0x00])
        let a = try r.readAddress(type: .public, "addr")
        #expect(a.description == "00:11:22:33:44:55")
    }

    @Test func sixteenBitUUIDsAliasTheBaseUUID() throws {
        let u = BluetoothUUID(0x180F)
        #expect(u.uuidString == "0000180F-0000-1000-8000-00805F9B34FB")
        #expect(u.uint16 == 0x180F)
        #expect(u.name == "Battery")
        #expect(BluetoothUUID(parsing: "0000180f-0000-1000-8000-00805f9b34fb") == u)
        #expect(BluetoothUUID(parsing: "0x180f") == u)
        #expect(BluetoothUUID(littleEndian: [0x0F, 0x18][...]) == u)
        #expect(BluetoothUUID(littleEndian: u.bytes128[...]) == u)
        #expect(u.attBytes == [0x0F, 0x18])
    }

    @Test func thirtyTwoBitUUIDsGoAs128InATT() {
        let u = BluetoothUUID(uint32: 0x1234_5678)
        #expect(u.uint16 == nil)
        #expect(u.uint32 == 0x1234_5678)
        #expect(u.attSize == 16)
    }

    @Test func vendorUUIDParsesAndPrints() throws {
        let u = try #require(BluetoothUUID(parsing: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"))
        #expect(u.uuidString == "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
        #expect(u.uint16 == nil)
        #expect(BluetoothUUID(littleEndian: u.bytes128[...]) == u)
    }

    @Test func hexParsesAndFormats() {
        #expect(parseHex("0x0118") == [0x01, 0x18])
        #expect(parseHex("01 ab:CD") == [0x01, 0xAB, 0xCD])
        #expect(parseHex("abc") == nil)
        #expect(parseHex("zz") == nil)
        #expect(hexString([0x01, 0xAB]) == "01ab")
        #expect(hex(UInt16(0x2a00), width: 4) == "2a00")
    }
}
