import Bluewire
import BluewireATT
import BluewireCore
import BluewireGATT
import Foundation
import Testing

/// Bluewire's GATT client against a GATT server nobody here wrote: bumble's, on a fresh link per test.
@Suite("GATT client against a bumble peripheral")
struct GATTClientInteropTests {
    @Test("a full dump equals the peripheral's database: handles, types, properties and values")
    func dumpEqualsThePeripheralDatabase() async throws {
        let capture = interopCapturePath("bluewire_gatt_dump.btsnoop")
        defer { removeTemporaryCapture(capture) }
        try await withGATTPeripheral(capture: capture, ownAddress: "C4:5A:17:00:B2:01") { session in
            let mtu = try await session.gatt.exchangeMTU()
            #expect(mtu > 23, "the MTU exchange raised ATT_MTU")
            let dump = try await session.gatt.dump()
            let mine = dump.attributes
            #expect(mine.map(\.handle) == session.database.map(\.handle), "every attribute found, none invented")
            #expect(mine.map { hexString($0.type.attBytes) } == session.database.map(\.type))
            for (attribute, theirs) in zip(mine, session.database) {
                guard let value = theirs.value, attribute.value != nil || attribute.properties?.contains(.read) == true else { continue }
                #expect(attribute.value.map { hexString($0) } == value, "value of handle 0x\(hex(attribute.handle, width: 4))")
            }
            // Properties: the declarations bumble serves carry them, and the dump's value rows repeat them.
            for attribute in mine where attribute.type == .characteristic {
                let properties = try #require(attribute.value?.first)
                let valueHandle = UInt16(attribute.value![1]) | UInt16(attribute.value![2]) << 8
                #expect(mine.first { $0.handle == valueHandle }?.properties?.rawValue == properties)
            }
            #expect(dump.values[try session.valueHandle(of: GATTInteropDatabase.long)] == GATTInteropDatabase.longValue)
            let uart = try #require(dump.services.first { $0.service.uuid == GATTInteropDatabase.uartService })
            #expect(uart.characteristics.map(\.characteristic.uuid) == [GATTInteropDatabase.uartRX, GATTInteropDatabase.uartTX])
            #expect(session.gatt.state == .connected(.discoveredCharacteristic))
        }
        #expect(try sentATTOpcodes(inCapture: capture).contains(ATTOpcode.readByGroupTypeRequest.rawValue))
    }

    @Test("a 300-byte value reads whole through Read Blob at the default ATT_MTU of 23")
    func longValueReadsWholeThroughReadBlob() async throws {
        let capture = interopCapturePath("bluewire_gatt_long_read_write.btsnoop")
        defer { removeTemporaryCapture(capture) }
        try await withGATTPeripheral(capture: capture, ownAddress: "C4:5A:17:00:B2:02") { session in
            #expect(await session.gatt.mtu == 23)
            let long = try await session.characteristic(GATTInteropDatabase.long)
            #expect(try await session.gatt.read(long) == GATTInteropDatabase.longValue)
            let written = (0..<300).map { UInt8(truncatingIfNeeded: 255 - $0) }
            try await session.gatt.write(written, to: long)
            let event = await session.events.first { ($0["write"] as? Int) == Int(long.valueHandle) }
            #expect(event?["value"] as? String == hexString(written), "bumble got the 300 bytes from the prepared writes")
            #expect(try await session.gatt.readLong(handle: long.valueHandle) == written)
        }
        let opcodes = try sentATTOpcodes(inCapture: capture)
        #expect(opcodes.filter { $0 == ATTOpcode.readBlobRequest.rawValue }.count >= 2 * (300 / 22))
        #expect(opcodes.filter { $0 == ATTOpcode.prepareWriteRequest.rawValue }.count == (300 + 17) / 18)
        #expect(opcodes.contains(ATTOpcode.executeWriteRequest.rawValue))
    }

    @Test("writes with and without response, a reliable write and a 128-bit characteristic write all arrive at the peripheral")
    func writesArrive() async throws {
        try await withGATTPeripheral { session in
            let control = try await session.characteristic(GATTInteropDatabase.control)
            let rx = try await session.characteristic(GATTInteropDatabase.uartRX)
            try await session.gatt.write([0x01, 0x02], to: control.valueHandle)
            try await session.gatt.writeWithoutResponse([0x03, 0x04, 0x05], to: control.valueHandle)
            try await session.gatt.writeWithoutResponse(Array("hello".utf8), to: rx.valueHandle)
            try await session.gatt.reliableWrite([(control.valueHandle, [0x06]), (rx.valueHandle, [0x07, 0x08])])
            var expected: [(UInt16, String)] = [
                (control.valueHandle, "0102"), (control.valueHandle, "030405"), (rx.valueHandle, hexString(Array("hello".utf8))),
            ]
            expected += [(control.valueHandle, "06"), (rx.valueHandle, "0708")]
            _ = await session.events.first { ($0["write"] as? Int) == Int(rx.valueHandle) && ($0["value"] as? String) == "0708" }
            let writes = session.events.events.compactMap { event -> (UInt16, String)? in
                guard let handle = event["write"] as? Int, let value = event["value"] as? String else { return nil }
                return (UInt16(handle), value)
            }
            #expect(writes.map(\.0) == expected.map(\.0))
            #expect(writes.map(\.1) == expected.map(\.1))
            #expect(try await session.gatt.read(control) == [0x06])
        }
    }

    @Test("reads by type, multiple reads and discovery by UUID agree with the peripheral")
    func otherReadsAndDiscoveries() async throws {
        try await withGATTPeripheral { session in
            let services = try await session.gatt.discoverServices(uuid: GATTInteropDatabase.service)
            let service = try #require(services.first)
            #expect(services.count == 1)
            let byUUID = try await session.gatt.discoverCharacteristics(of: service, uuid: GATTInteropDatabase.control)
            let control = try #require(byUUID.first)
            let controlHandle = try session.valueHandle(of: GATTInteropDatabase.control)
            #expect(byUUID.count == 1 && control.valueHandle == controlHandle)
            let counter = try #require(try await session.gatt.discoverCharacteristics(of: service).first { $0.uuid == GATTInteropDatabase.counter })
            let values = try await session.gatt.read(uuid: GATTInteropDatabase.control, startingHandle: service.handle, endingHandle: service.endHandle)
            #expect(values == [GATTHandleValue(handle: control.valueHandle, value: [0x00])])
            #expect(try await session.gatt.readMultiple(handles: [counter.valueHandle, control.valueHandle]) == [0x00, 0x00])
            #expect(try await session.gatt.includedServices(of: service).isEmpty)
            let descriptors = try await session.gatt.discoverDescriptors(of: counter)
            #expect(descriptors.map(\.uuid) == [.clientCharacteristicConfiguration])
        }
    }
}
