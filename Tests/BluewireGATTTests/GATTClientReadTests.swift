import BluewireATT
import BluewireCore
import BluewireGATT
import Testing

@Suite("GATT client: reads")
struct GATTClientReadTests {
    @Test("Read Characteristic Value sends a Read Request and returns the Read Response's value")
    func readCharacteristicValue() throws {
        let result = drive(ReadCharacteristicValue(handle: 3), [Exchange("0a 0300", "0b 426c7565")])
        #expect(try #require(result.value) == Array("Blue".utf8))
    }

    @Test("A Read Not Permitted Error Response becomes a typed error with the opcode and handle")
    func readErrorResponse() throws {
        let result = drive(ReadCharacteristicValue(handle: 3), [Exchange("0a 0300", "01 0a 0300 02")])
        let error = try #require(result.failure)
        #expect(error == .errorResponse(.readNotPermitted, requestOpcode: .readRequest, handle: 3))
        #expect(error.description == "Read Not Permitted (0x02) answering Read Request on handle 0x0003")
        #expect(!error.isInsufficientSecurity)
    }

    @Test("A response of the wrong kind is reported as unexpected, naming both opcodes")
    func readWrongResponse() {
        let result = drive(ReadCharacteristicValue(handle: 3), [Exchange("0a 0300", "13")])
        #expect(result.failure == .unexpectedResponse(request: .readRequest, received: .writeResponse))
    }

    @Test("Read Long reads blobs at increasing offsets until a part shorter than ATT_MTU − 1")
    func readLongAcrossSeveralBlobs() throws {
        let value = ramp(50)
        let result = drive(ReadLongCharacteristicValues(handle: 5, mtu: 23), [
            Exchange("0a 0500", "0b" + hexString(value[0..<22])),
            Exchange("0c 0500 1600", "0d" + hexString(value[22..<44])),
            Exchange("0c 0500 2c00", "0d" + hexString(value[44..<50])),
        ])
        #expect(try #require(result.value) == value)
    }

    @Test("Read Long with a larger MTU asks for fewer, larger parts")
    func readLongHonoursMTU() throws {
        let value = ramp(150, from: 7)
        let result = drive(ReadLongCharacteristicValues(handle: 0x0102, mtu: 100), [
            Exchange("0a 0201", "0b" + hexString(value[0..<99])),
            Exchange("0c 0201 6300", "0d" + hexString(value[99...])),
        ])
        #expect(try #require(result.value) == value)
    }

    @Test("A value that is an exact multiple of ATT_MTU − 1 ends with an empty Read Blob Response")
    func readLongExactMultipleEmptyBlob() throws {
        let value = ramp(44)
        let result = drive(ReadLongCharacteristicValues(handle: 5, mtu: 23), [
            Exchange("0a 0500", "0b" + hexString(value[0..<22])),
            Exchange("0c 0500 1600", "0d" + hexString(value[22..<44])),
            Exchange("0c 0500 2c00", "0d"),
        ])
        #expect(try #require(result.value) == value)
    }

    @Test("Invalid Offset at the value's end and Attribute Not Long both end a long read")
    func readLongEndsOnInvalidOffsetOrNotLong() throws {
        let value = ramp(22)
        let invalidOffset = drive(ReadLongCharacteristicValues(handle: 5, mtu: 23), [
            Exchange("0a 0500", "0b" + hexString(value)),
            Exchange("0c 0500 1600", "01 0c 0500 07"),
        ])
        #expect(try #require(invalidOffset.value) == value)
        let notLong = drive(ReadLongCharacteristicValues(handle: 5, mtu: 23), [
            Exchange("0a 0500", "0b" + hexString(value)),
            Exchange("0c 0500 1600", "01 0c 0500 0b"),
        ])
        #expect(try #require(notLong.value) == value)
    }

    @Test("Another Error Response to a Read Blob fails the long read")
    func readLongBlobError() throws {
        let result = drive(ReadLongCharacteristicValues(handle: 5, mtu: 23), [
            Exchange("0a 0500", "0b" + hexString(ramp(22))),
            Exchange("0c 0500 1600", "01 0c 0500 0f"),
        ])
        #expect(result.failure == .errorResponse(.insufficientEncryption, requestOpcode: .readBlobRequest, handle: 5))
    }

    @Test("A server sending more than 512 octets is stopped instead of followed forever")
    func readLongStopsBeyondMaximumLength() throws {
        var script = [Exchange("0a 0500", "0b" + hexString(ramp(22)))]
        for part in 1...23 {
            script.append(Exchange("0c 0500 " + hexString([UInt8(truncatingIfNeeded: part * 22), UInt8((part * 22) >> 8)]),
                                   "0d" + hexString(ramp(22))))
        }
        let result = drive(ReadLongCharacteristicValues(handle: 5, mtu: 23), script)
        #expect(result.failure == .valueTooLong(length: 528, maximum: 512))
    }

    @Test("Read Multiple sends every handle and returns the concatenated values")
    func readMultiple() throws {
        let result = drive(ReadMultipleCharacteristicValues(handles: [3, 5]), [
            Exchange("0e 0300 0500", "0f 426c7565 0000"),
        ])
        #expect(try #require(result.value) == [0x42, 0x6C, 0x75, 0x65, 0x00, 0x00])
        var single = ReadMultipleCharacteristicValues(handles: [3])
        #expect(throws: GATTClientError.self) { try single.start() }
    }

    @Test("Read Multiple Variable splits the values by their lengths")
    func readMultipleVariable() throws {
        let result = drive(ReadMultipleVariableLengthCharacteristicValues(handles: [3, 5]), [
            Exchange("20 0300 0500", "21 0400 426c7565 0200 0000"),
        ])
        #expect(try #require(result.value) == [Array("Blue".utf8), [0, 0]])
    }

    @Test("Read Using Characteristic UUID continues after the last handle until Attribute Not Found")
    func readUsingCharacteristicUUID() throws {
        let result = drive(ReadUsingCharacteristicUUID(uuid: BluetoothUUID(0x2A19)), [
            Exchange("08 0100 ffff 192a", "09 03 1200 64 2200 32"),
            Exchange("08 2300 ffff 192a", "01 08 2300 0a"),
        ])
        #expect(try #require(result.value) == [
            GATTHandleValue(handle: 0x12, value: [0x64]), GATTHandleValue(handle: 0x22, value: [0x32]),
        ])
    }
}
