import BluewireATT
import BluewireCore
import BluewireGATT
import Testing

@Suite("GATT client: service, include, characteristic and descriptor discovery")
struct GATTClientDiscoveryTests {
    @Test("Discover All Primary Services iterates Read By Group Type until Attribute Not Found")
    func discoverAllPrimaryServicesUntilAttributeNotFound() throws {
        let result = drive(DiscoverAllPrimaryServices(), [
            Exchange("10 0100 ffff 0028", "11 06 0100 0500 0018 0600 0900 0118"),
            Exchange("10 0a00 ffff 0028", "11 14 0a00 1000 " + nordicUARTWire),
            Exchange("10 1100 ffff 0028", "01 10 1100 0a"),
        ])
        let services = try #require(result.value)
        #expect(services == [
            GATTService(handle: 0x0001, endHandle: 0x0005, uuid: .genericAccess),
            GATTService(handle: 0x0006, endHandle: 0x0009, uuid: .genericAttribute),
            GATTService(handle: 0x000A, endHandle: 0x0010, uuid: nordicUART),
        ])
    }

    @Test("Discover All Primary Services stops without another request when a group ends at 0xFFFF")
    func discoverAllPrimaryServicesStopsAtLastHandle() throws {
        let result = drive(DiscoverAllPrimaryServices(), [
            Exchange("10 0100 ffff 0028", "11 06 0100 0500 0018 0600 ffff 0f18"),
        ])
        let services = try #require(result.value)
        #expect(services.map(\.endHandle) == [0x0005, 0xFFFF])
        #expect(services.last?.uuid == BluetoothUUID(0x180F))
    }

    @Test("An Error Response other than Attribute Not Found fails discovery with its name, opcode and handle")
    func discoveryErrorResponseIsTyped() throws {
        let result = drive(DiscoverAllPrimaryServices(), [Exchange("10 0100 ffff 0028", "01 10 0100 05")])
        let error = try #require(result.failure)
        #expect(error == .errorResponse(.insufficientAuthentication, requestOpcode: .readByGroupTypeRequest, handle: 1))
        #expect(error.description == "Insufficient Authentication (0x05) answering Read By Group Type Request on handle 0x0001")
        #expect(error.isInsufficientSecurity)
    }

    @Test("A server that answers with handles below the requested start is refused instead of looped on")
    func discoveryRefusesHandlesThatDoNotAdvance() throws {
        let result = drive(DiscoverAllPrimaryServices(), [
            Exchange("10 0100 ffff 0028", "11 06 0100 0500 0018"),
            Exchange("10 0600 ffff 0028", "11 06 0100 0500 0018"),
        ])
        #expect(result.failure == .handlesNotIncreasing(request: .readByGroupTypeRequest, handle: 1))
    }

    @Test("A service UUID of 4 octets is a malformed response naming the field and offset")
    func discoveryRejectsFourOctetUUID() throws {
        let result = drive(DiscoverAllPrimaryServices(), [
            Exchange("10 0100 ffff 0028", "11 08 0100 0500 0f180000"),
        ])
        guard case .malformedResponse(let decode)? = result.failure else {
            Issue.record("expected malformedResponse, got \(result)")
            return
        }
        #expect(decode.field.asString == "Attribute Value (service UUID)")
        #expect(decode.offset == 6)
        #expect(decode.reason == .invalidValue(4))
    }

    @Test("Discover Primary Service by Service UUID uses Find By Type Value and continues after each group")
    func discoverPrimaryServiceByUUID() throws {
        let result = drive(DiscoverPrimaryServiceByServiceUUID(uuid: BluetoothUUID(0x180F)), [
            Exchange("06 0100 ffff 0028 0f18", "07 1000 1400 2000 2400"),
            Exchange("06 2500 ffff 0028 0f18", "01 06 2500 0a"),
        ])
        let services = try #require(result.value)
        #expect(services.map(\.handleRange) == [0x0010...0x0014, 0x0020...0x0024])
        #expect(services.allSatisfy { $0.uuid == BluetoothUUID(0x180F) })
    }

    @Test("Discover Primary Service by Service UUID sends a 128-bit UUID as 16 octets")
    func discoverPrimaryServiceBy128BitUUID() throws {
        let result = drive(DiscoverPrimaryServiceByServiceUUID(uuid: nordicUART), [
            Exchange("06 0100 ffff 0028 " + nordicUARTWire, "07 0a00 ffff"),
        ])
        #expect(try #require(result.value) == [GATTService(handle: 0x000A, endHandle: 0xFFFF, uuid: nordicUART)])
    }

    @Test("Find Included Services reads the 128-bit UUID of an include that does not carry it")
    func findIncludedServicesResolves128BitUUIDs() throws {
        let service = GATTService(handle: 0x0010, endHandle: 0x0020, uuid: BluetoothUUID(0x1812))
        let result = drive(FindIncludedServices(of: service), [
            Exchange("08 1000 2000 0228", "09 08 1100 3000 3500 0f18"),
            Exchange("08 1200 2000 0228", "09 06 1200 4000 4800"),
            Exchange("0a 4000", "0b " + nordicUARTWire),
            Exchange("08 1300 2000 0228", "01 08 1300 0a"),
        ])
        let includes = try #require(result.value)
        #expect(includes == [
            GATTIncludedService(declarationHandle: 0x0011, serviceHandle: 0x0030, endHandle: 0x0035, uuid: BluetoothUUID(0x180F)),
            GATTIncludedService(declarationHandle: 0x0012, serviceHandle: 0x0040, endHandle: 0x0048, uuid: nordicUART),
        ])
    }

    @Test("Discover All Characteristics decodes declarations and ends each definition before the next")
    func discoverAllCharacteristics() throws {
        let service = GATTService(handle: 0x0001, endHandle: 0x0009, uuid: .genericAccess)
        let result = drive(DiscoverCharacteristics(of: service), [
            Exchange("08 0100 0900 0328", "09 07 0200 02 0300 002a 0400 0a 0500 012a"),
            Exchange("08 0500 0900 0328", "09 15 0600 10 0700 " + nordicUARTWire),
            Exchange("08 0700 0900 0328", "01 08 0700 0a"),
        ])
        let characteristics = try #require(result.value)
        #expect(characteristics == [
            GATTCharacteristic(handle: 2, valueHandle: 3, properties: [.read], uuid: .deviceName, endHandle: 3),
            GATTCharacteristic(handle: 4, valueHandle: 5, properties: [.read, .write], uuid: .appearance, endHandle: 5),
            GATTCharacteristic(handle: 6, valueHandle: 7, properties: [.notify], uuid: nordicUART, endHandle: 9),
        ])
    }

    @Test("Discover Characteristics by UUID keeps only matches but still ends them at the next declaration")
    func discoverCharacteristicsByUUID() throws {
        let result = drive(DiscoverCharacteristics(startingHandle: 1, endingHandle: 9, uuid: .deviceName), [
            Exchange("08 0100 0900 0328", "09 07 0200 02 0300 002a 0400 0a 0500 012a"),
            Exchange("08 0500 0900 0328", "01 08 0500 0a"),
        ])
        #expect(try #require(result.value) == [
            GATTCharacteristic(handle: 2, valueHandle: 3, properties: [.read], uuid: .deviceName, endHandle: 3),
        ])
    }

    @Test("A characteristic declaration of the wrong length is a malformed response")
    func characteristicDeclarationLengthChecked() throws {
        let result = drive(DiscoverCharacteristics(startingHandle: 1, endingHandle: 9), [
            Exchange("08 0100 0900 0328", "09 06 0200 02 0300 00"),
        ])
        guard case .malformedResponse(let decode)? = result.failure else {
            Issue.record("expected malformedResponse, got \(result)")
            return
        }
        #expect(decode.field.asString == "Characteristic Declaration")
    }

    @Test("Discover All Characteristic Descriptors searches after the value handle to the definition's end")
    func discoverDescriptors() throws {
        let characteristic = GATTCharacteristic(handle: 6, valueHandle: 7, properties: [.notify], uuid: nordicUART, endHandle: 9)
        let result = drive(DiscoverAllCharacteristicDescriptors(of: characteristic), [
            Exchange("04 0800 0900", "05 01 0800 0229 0900 0129"),
        ])
        #expect(try #require(result.value) == [
            GATTDescriptor(handle: 8, uuid: .clientCharacteristicConfiguration),
            GATTDescriptor(handle: 9, uuid: .characteristicUserDescription),
        ])
    }

    @Test("Descriptor discovery reads 128-bit types and stops at Attribute Not Found")
    func discoverDescriptors128BitAndNotFound() throws {
        let result = drive(DiscoverAllCharacteristicDescriptors(startingHandle: 0x20, endingHandle: 0x30), [
            Exchange("04 2000 3000", "05 02 2000 " + nordicUARTWire),
            Exchange("04 2100 3000", "01 04 2100 0a"),
        ])
        #expect(try #require(result.value) == [GATTDescriptor(handle: 0x20, uuid: nordicUART)])
    }

    @Test("A characteristic whose value is its last attribute has no descriptors and sends nothing")
    func noDescriptorRoomSendsNothing() throws {
        let characteristic = GATTCharacteristic(handle: 2, valueHandle: 3, properties: [.read], uuid: .deviceName, endHandle: 3)
        var procedure = DiscoverAllCharacteristicDescriptors(of: characteristic)
        #expect(try procedure.start().output == [])
    }

    @Test("An empty or zero-based handle range is refused before anything is sent")
    func invalidRangesAreRefused() {
        var backwards = DiscoverAllPrimaryServices(startingHandle: 9, endingHandle: 1)
        #expect(throws: GATTClientError.invalidHandleRange(start: 9, end: 1)) { try backwards.start() }
        var zero = DiscoverCharacteristics(startingHandle: 0, endingHandle: 5)
        #expect(throws: GATTClientError.invalidHandleRange(start: 0, end: 5)) { try zero.start() }
    }
}
