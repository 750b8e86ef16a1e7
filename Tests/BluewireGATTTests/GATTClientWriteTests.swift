import BluewireATT
import BluewireCore
import BluewireGATT
import Testing

@Suite("GATT client: writes and subscriptions")
struct GATTClientWriteTests {
    @Test("Write Characteristic Value sends a Write Request and finishes on the Write Response")
    func writeRequest() throws {
        let result = drive(WriteCharacteristicValue(handle: 5, value: [1, 2], mtu: 23), [Exchange("12 0500 0102", "13")])
        #expect(result.value != nil)
    }

    @Test("A Write Not Permitted Error Response fails the write with the opcode and handle")
    func writeRequestError() {
        let result = drive(WriteCharacteristicValue(handle: 5, value: [1], mtu: 23), [Exchange("12 0500 01", "01 12 0500 03")])
        #expect(result.failure == .errorResponse(.writeNotPermitted, requestOpcode: .writeRequest, handle: 5))
    }

    @Test("A value longer than ATT_MTU − 3 is refused before sending (Write Request and Write Command)")
    func writeTooLong() throws {
        var write = WriteCharacteristicValue(handle: 5, value: ramp(21), mtu: 23)
        #expect(throws: GATTClientError.valueTooLong(length: 21, maximum: 20)) { try write.start() }
        #expect(throws: GATTClientError.valueTooLong(length: 21, maximum: 20)) {
            try WriteWithoutResponse.command(handle: 5, value: ramp(21), mtu: 23)
        }
        let command = try WriteWithoutResponse.command(handle: 5, value: ramp(20), mtu: 23)
        #expect(hexString(command.encode()) == "520500" + hexString(ramp(20)))
    }

    @Test("Long write sends Prepare Writes of ATT_MTU − 5 octets, checks each echo, then executes")
    func longWrite() throws {
        let value = ramp(40, from: 0x30)
        let parts = [(0, value[0..<18]), (18, value[18..<36]), (36, value[36..<40])]
        var script: [Exchange] = []
        for (offset, part) in parts {
            let pdu = "0500" + hexString([UInt8(offset), 0]) + hexString(part)
            script.append(Exchange("16" + pdu, "17" + pdu))
        }
        script.append(Exchange("18 01", "19"))
        let result = drive(PreparedWrites.writeLong(handle: 5, value: value, mtu: 23), script)
        #expect(result.value != nil)
    }

    @Test("A Prepare Write Response that does not echo the value cancels the queue and fails")
    func longWriteEchoMismatch() {
        let value = ramp(40)
        var corrupted = Array(value[18..<36])
        corrupted[3] ^= 0xFF
        let result = drive(PreparedWrites.writeLong(handle: 5, value: value, mtu: 23), [
            Exchange("16 0500 0000" + hexString(value[0..<18]), "17 0500 0000" + hexString(value[0..<18])),
            Exchange("16 0500 1200" + hexString(value[18..<36]), "17 0500 1200" + hexString(corrupted)),
            Exchange("18 00", "19"),
        ])
        #expect(result.failure == .preparedWriteMismatch(handle: 5, offset: 18))
    }

    @Test("An echo for the wrong offset is a mismatch too")
    func longWriteEchoWrongOffset() {
        let value = ramp(10)
        let result = drive(PreparedWrites.writeLong(handle: 5, value: value, mtu: 23), [
            Exchange("16 0500 0000" + hexString(value), "17 0500 0100" + hexString(value)),
            Exchange("18 00", "19"),
        ])
        #expect(result.failure == .preparedWriteMismatch(handle: 5, offset: 0))
    }

    @Test("An Error Response to a Prepare Write cancels the queue, then reports the server's error")
    func longWritePrepareError() {
        let value = ramp(30)
        let result = drive(PreparedWrites.writeLong(handle: 5, value: value, mtu: 23), [
            Exchange("16 0500 0000" + hexString(value[0..<18]), "01 16 0500 09"),
            Exchange("18 00", "19"),
        ])
        #expect(result.failure == .errorResponse(.prepareQueueFull, requestOpcode: .prepareWriteRequest, handle: 5))
    }

    @Test("Reliable writes queue every value, each checked, and execute them together")
    func reliableWrite() {
        let result = drive(PreparedWrites.reliable([(handle: 5, value: [1, 2]), (handle: 7, value: [3])], mtu: 23), [
            Exchange("16 0500 0000 0102", "17 0500 0000 0102"),
            Exchange("16 0700 0000 03", "17 0700 0000 03"),
            Exchange("18 01", "19"),
        ])
        #expect(result.value != nil)
    }

    @Test("Subscribing finds the CCCD among the descriptors and writes 0x0001 to it")
    func subscribeFindsCCCD() throws {
        let characteristic = GATTCharacteristic(handle: 6, valueHandle: 7, properties: [.notify], uuid: nordicUART, endHandle: 9)
        let result = drive(ConfigureClientCharacteristicConfiguration.subscribe(to: characteristic), [
            Exchange("04 0800 0900", "05 01 0800 0129 0900 0229"),
            Exchange("12 0900 0100", "13"),
        ])
        #expect(try #require(result.value) == 9)
    }

    @Test("Indications write 0x0002 and unsubscribing writes 0x0000 to a known CCCD handle")
    func indicateAndUnsubscribe() throws {
        let characteristic = GATTCharacteristic(handle: 6, valueHandle: 7, properties: [.indicate], uuid: .serviceChanged, endHandle: 8)
        let subscribe = drive(
            ConfigureClientCharacteristicConfiguration.subscribe(to: characteristic, indications: true, descriptorHandle: 8),
            [Exchange("12 0800 0200", "13")])
        #expect(subscribe.value == 8)
        let unsubscribe = drive(
            ConfigureClientCharacteristicConfiguration.unsubscribe(from: characteristic, descriptorHandle: 8),
            [Exchange("12 0800 0000", "13")])
        #expect(unsubscribe.value == 8)
    }

    @Test("Subscribing to a characteristic without a CCCD fails after the search, naming it")
    func subscribeWithoutCCCD() {
        let characteristic = GATTCharacteristic(handle: 6, valueHandle: 7, properties: [.notify], uuid: nordicUART, endHandle: 8)
        let result = drive(ConfigureClientCharacteristicConfiguration.subscribe(to: characteristic), [
            Exchange("04 0800 0800", "05 01 0800 0129"),
        ])
        #expect(result.failure == .descriptorNotFound(.clientCharacteristicConfiguration, characteristicHandle: 6))
    }

    @Test("Notifications on a characteristic without the Notify property are refused before sending")
    func subscribeRequiresNotifyProperty() {
        let characteristic = GATTCharacteristic(handle: 2, valueHandle: 3, properties: [.read], uuid: .deviceName, endHandle: 4)
        var procedure = ConfigureClientCharacteristicConfiguration.subscribe(to: characteristic)
        #expect(throws: GATTClientError.propertyNotSupported(.notify, characteristicHandle: 2)) { try procedure.start() }
    }
}
