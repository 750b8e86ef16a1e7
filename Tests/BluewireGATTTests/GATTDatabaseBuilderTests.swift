import BluewireCore
import Testing
@testable import BluewireGATT

@Suite struct GATTDatabaseBuilderTests {
    @Test func handlesAreAssignedInOrderWithDeclarationValues() throws {
        var builder = GATTDatabaseBuilder()
        let gap = try builder.addService(.genericAccess)
        let name = try builder.addCharacteristic(
            .deviceName, properties: [.read], permissions: [.read], value: .cached(Array("Blue".utf8)))
        let database = builder.build()

        #expect(gap.startHandle == 0x0001)
        #expect(name == GATTCharacteristicHandles(declarationHandle: 2, valueHandle: 3, clientConfigurationHandle: nil))
        #expect(database.attributes.map(\.handle) == [1, 2, 3])
        #expect(database.attributes.map(\.type) == [.primaryService, .characteristic, .deviceName])
        // Service declaration value is the service UUID, little-endian (Part G §3.1).
        #expect(database.attributes[0].cachedValue == [0x00, 0x18])
        // Characteristic declaration: properties 0x02, value handle 0x0003, UUID 0x2A00 (Part G §3.3.1).
        #expect(database.attributes[1].cachedValue == [0x02, 0x03, 0x00, 0x00, 0x2A])
        #expect(database.attributes[2].cachedValue == Array("Blue".utf8))
        #expect(database.attributes[1].permissions == [.read])
    }

    @Test func notifyOrIndicateAddsAClientConfigurationDescriptorAfterTheValue() throws {
        var builder = GATTDatabaseBuilder()
        try builder.addService(BluetoothUUID(0x180F))
        let level = try builder.addCharacteristic(
            BluetoothUUID(0x2A19), properties: [.read, .notify], permissions: [.read], value: .cached([100]))
        let description = try builder.addDescriptor(
            .characteristicUserDescription, permissions: [.read], value: .cached(Array("Level".utf8)))
        let alert = try builder.addCharacteristic(
            BluetoothUUID(0x2A06), properties: [.indicate], permissions: [], value: .cached([]))
        let plain = try builder.addCharacteristic(
            BluetoothUUID(0x2A07), properties: [.read], permissions: [.read], value: .cached([0]))
        let database = builder.build()

        #expect(level.clientConfigurationHandle == 4)
        #expect(description == 5)
        #expect(alert.clientConfigurationHandle == 8)
        #expect(plain.clientConfigurationHandle == nil)
        #expect(database[handle: 4]?.type == .clientCharacteristicConfiguration)
        #expect(database[handle: 4]?.cachedValue == [0, 0])
        #expect(database[handle: 4]?.permissions == [.read, .write])
        #expect(database.characteristic(valueHandle: 3)?.clientConfigurationHandle == 4)
        #expect(database.characteristic(valueHandle: 3)?.endHandle == 5)
        #expect(database.characteristic(clientConfigurationHandle: 8)?.valueHandle == 7)
        #expect(database.characteristics.count == 3)
    }

    @Test func longUUIDsAreDeclaredIn128Bits() throws {
        let uuid = try #require(BluetoothUUID(parsing: "6e400001-b5a3-f393-e0a9-e50e24dcca9e"))
        var builder = GATTDatabaseBuilder()
        try builder.addService(uuid)
        try builder.addCharacteristic(uuid, properties: [.write], permissions: [.write], value: .cached([]))
        let database = builder.build()
        #expect(database.attributes[0].cachedValue == uuid.bytes128)
        #expect(database.attributes[1].cachedValue == [0x08, 0x03, 0x00] + uuid.bytes128)
    }

    @Test func includeDeclarationCarriesRangeAndOnly16BitUUIDs() throws {
        var builder = GATTDatabaseBuilder()
        let battery = try builder.addService(BluetoothUUID(0x180F), kind: .secondary)
        try builder.addCharacteristic(BluetoothUUID(0x2A19), properties: [.read], permissions: [.read], value: .cached([1]))
        let custom = try builder.addService(BluetoothUUID(high: 1, low: 2), kind: .secondary)
        try builder.addService(BluetoothUUID(0x1812))
        let first = try builder.addIncludedService(battery)
        let second = try builder.addIncludedService(custom)
        let database = builder.build()

        #expect(database.attributes[0].type == .secondaryService)
        #expect(database[handle: first]?.type == .include)
        #expect(database[handle: first]?.cachedValue == [0x01, 0x00, 0x03, 0x00, 0x0F, 0x18])
        // A 128-bit included service UUID is left out of the declaration (Part G §3.2).
        #expect(database[handle: second]?.cachedValue == [0x04, 0x00, 0x04, 0x00])
    }

    @Test func structuralMistakesAreTypedErrors() throws {
        var builder = GATTDatabaseBuilder()
        #expect(throws: GATTDatabaseError.noServiceOpen) {
            try builder.addCharacteristic(.deviceName, properties: [.read], permissions: [.read], value: .cached([]))
        }
        let open = try builder.addService(.genericAccess)
        #expect(throws: GATTDatabaseError.noCharacteristicOpen) {
            try builder.addDescriptor(.characteristicUserDescription, permissions: [.read], value: .cached([]))
        }
        #expect(throws: GATTDatabaseError.serviceNotIncludable(startHandle: open.startHandle)) {
            try builder.addIncludedService(open)
        }
        try builder.addCharacteristic(.deviceName, properties: [.read], permissions: [.read], value: .cached([]))
        let other = try builder.addService(.genericAttribute)
        try builder.addCharacteristic(.serviceChanged, properties: [.indicate], permissions: [], value: .cached([]))
        #expect(throws: GATTDatabaseError.includeAfterCharacteristic) { try builder.addIncludedService(open) }
        _ = other
        #expect(throws: GATTDatabaseError.valueTooLong(handle: 9, length: 513)) {
            try builder.addCharacteristic(.appearance, properties: [.read], permissions: [.read], value: .cached(Array(repeating: 0, count: 513)))
        }
    }

    @Test func runningPastHandle0xFFFFIsAnErrorNotAWrap() throws {
        var builder = GATTDatabaseBuilder(firstHandle: 0xFFFE)
        try builder.addService(.genericAccess)
        #expect(throws: GATTDatabaseError.outOfHandles) {
            try builder.addCharacteristic(.deviceName, properties: [.read], permissions: [.read], value: .cached([]))
        }
        #expect(builder.build().attributes.map(\.handle) == [0xFFFE])
        var full = GATTDatabaseBuilder(firstHandle: 0xFFFD)
        try full.addService(.genericAccess)
        #expect(throws: GATTDatabaseError.outOfHandles) {
            try full.addCharacteristic(.deviceName, properties: [.notify], permissions: [.read], value: .cached([]))
        }
        #expect(full.build().attributes.count == 1)
    }

    @Test func skippedHandlesLeaveAGap() throws {
        var builder = GATTDatabaseBuilder()
        try builder.addService(.genericAccess)
        try builder.skipHandles(to: 0x0010)
        try builder.addService(.genericAttribute)
        #expect(builder.build().attributes.map(\.handle) == [0x0001, 0x0010])
        #expect(throws: GATTDatabaseError.handleNotAscending(0x0005)) { try builder.skipHandles(to: 0x0005) }
    }
}

@Suite struct GATTDatabaseTableTests {
    @Test func explicitTablesKeepHandlesAndRejectDisorder() throws {
        let attributes = [
            GATTAttribute(handle: 0x0010, type: .primaryService, permissions: [.read], bytes: [0x0F, 0x18]),
            GATTAttribute(handle: 0x0020, type: .characteristic, permissions: [.read], bytes: [0x12, 0x22, 0x00, 0x19, 0x2A]),
            GATTAttribute(handle: 0x0022, type: BluetoothUUID(0x2A19), permissions: [.read], bytes: [50]),
            GATTAttribute(handle: 0x0030, type: .clientCharacteristicConfiguration, permissions: [.read, .write], bytes: [0, 0]),
        ]
        let database = try GATTDatabase(attributes: attributes)
        #expect(database.attributes.map(\.handle) == [0x10, 0x20, 0x22, 0x30])
        #expect(database.index(of: 0x21) == nil)
        #expect(database.firstIndex(atOrAfter: 0x21) == 2)
        #expect(database.characteristic(valueHandle: 0x22)?.clientConfigurationHandle == 0x30)
        #expect(database.groupEndHandle(ofServiceAt: 0) == 0x30)

        #expect(throws: GATTDatabaseError.handleNotAscending(0x0010)) {
            try GATTDatabase(attributes: [attributes[1], attributes[0]])
        }
        #expect(throws: GATTDatabaseError.reservedHandle) {
            try GATTDatabase(attributes: [GATTAttribute(handle: 0, type: .primaryService, permissions: [], bytes: [])])
        }
    }

    @Test func malformedCharacteristicDeclarationsAreServedButNotIndexed() throws {
        let database = try GATTDatabase(attributes: [
            GATTAttribute(handle: 1, type: .characteristic, permissions: [.read], bytes: [0x02, 0x02]),
            GATTAttribute(handle: 2, type: .deviceName, permissions: [.read], bytes: [0x41]),
        ])
        #expect(database.characteristics.isEmpty)
        #expect(database[handle: 1]?.cachedValue == [0x02, 0x02])
    }

    @Test func setValueReplacesCachedBytesOnly() throws {
        var builder = GATTDatabaseBuilder()
        try builder.addService(BluetoothUUID(0x180F))
        let level = try builder.addCharacteristic(
            BluetoothUUID(0x2A19), properties: [.read], permissions: [.read], value: .cached([1]))
        let dynamic = try builder.addCharacteristic(
            BluetoothUUID(0x2A1A), properties: [.read], permissions: [.read],
            value: .dynamic(GATTDynamicValue(read: { _ throws(GATTAttributeError) in [7] })))
        var database = builder.build()
        try database.setValue([42], for: level.valueHandle)
        #expect(database[handle: level.valueHandle]?.cachedValue == [42])
        #expect(throws: GATTDatabaseError.valueIsDynamic(dynamic.valueHandle)) {
            try database.setValue([1], for: dynamic.valueHandle)
        }
        #expect(throws: GATTDatabaseError.noSuchHandle(0x0100)) { try database.setValue([1], for: 0x0100) }
    }
}
