import BluewireATT
import BluewireCore
import Testing
@testable import BluewireGATT

/// `GATTServer.notifyMultiple` (Core Vol 3 Part G §4.10.2, Part F §3.4.7.4): packing into Multiple
/// Handle Value Notifications only for a client that declared them, whole tuples within ATT_MTU.
@Suite struct GATTServerMultipleNotificationTests {
    /// The GATT service (features at its handles), then four notifiable characteristics.
    func server(declaring features: UInt8?) throws -> (GATTServer, [UInt16]) {
        var builder = GATTDatabaseBuilder()
        let featureHandles = try builder.addGenericAttributeService(serverFeatures: [])
        try builder.addService(BluetoothUUID(0xFE00))
        var handles: [UInt16] = []
        for index in 0..<4 {
            let added = try builder.addCharacteristic(
                BluetoothUUID(UInt16(0xFE01 + index)), properties: [.notify], permissions: [], value: .cached([]))
            handles.append(added.valueHandle)
        }
        var server = GATTServer(database: builder.build())
        server.connect(conn)
        for handle in handles {
            let descriptor = try #require(server.database.characteristic(valueHandle: handle)?.clientConfigurationHandle)
            #expect(server.exchange([0x12, UInt8(descriptor), UInt8(descriptor >> 8), 0x01, 0x00]) == [0x13])
        }
        if let features {
            let handle = featureHandles.clientSupportedFeatures
            #expect(server.exchange([0x12, UInt8(handle), UInt8(handle >> 8), features]) == [0x13])
        }
        _ = server.takeEvents()
        return (server, handles)
    }

    @Test func packedWithinTheMTUForADeclaringClient() throws {
        var (server, handles) = try server(declaring: 0x04)
        // ATT_MTU 23: 1 + (4 + 6) + (4 + 6) = 21 fits two 6-octet values; the third starts a new PDU.
        let values = handles.prefix(3).enumerated().map { GATTHandleValue(handle: $1, value: Array(repeating: UInt8($0), count: 6)) }
        let pdus = try server.notifyMultiple(values, to: conn)
        #expect(pdus.map { $0.bytes[0] } == [0x23, 0x1B], "two values packed, the one left over alone as 0x1B")
        #expect(pdus[0].bytes.count == 21)
        #expect(pdus[1].bytes == [0x1B, UInt8(handles[2]), UInt8(handles[2] >> 8)] + Array(repeating: 2, count: 6))
        // A value too long for a tuple goes as a cut Handle Value Notification.
        let long = try server.notifyMultiple([GATTHandleValue(handle: handles[0], value: Array(repeating: 9, count: 30)),
                                              GATTHandleValue(handle: handles[1], value: [1])], to: conn)
        #expect(long.map { $0.bytes[0] } == [0x1B, 0x1B])
        #expect(long[0].bytes.count == 23)
    }

    @Test func oneNotificationEachForAClientThatDidNotDeclare() throws {
        var (server, handles) = try server(declaring: nil)
        let values = handles.map { GATTHandleValue(handle: $0, value: [1]) }
        #expect(try server.notifyMultiple(values, to: conn).map { $0.bytes[0] } == [0x1B, 0x1B, 0x1B, 0x1B])
        var (declared, _) = try self.server(declaring: 0x02)  // EATT only: still no multiple notifications
        #expect(try declared.notifyMultiple(values, to: conn).count == 4)
    }

    @Test func onlySubscribedValuesAndOnlyNotifiableHandles() throws {
        var (server, handles) = try server(declaring: 0x04)
        let descriptor = try #require(server.database.characteristic(valueHandle: handles[1])?.clientConfigurationHandle)
        #expect(server.exchange([0x12, UInt8(descriptor), UInt8(descriptor >> 8), 0x00, 0x00]) == [0x13])
        let pdus = try server.notifyMultiple(handles.prefix(2).map { GATTHandleValue(handle: $0, value: [7]) }, to: conn)
        #expect(pdus.map(\.bytes) == [[0x1B, UInt8(handles[0]), UInt8(handles[0] >> 8), 7]])
        #expect(throws: GATTServerError.notCharacteristicValue(0x0001)) {
            try server.notifyMultiple([GATTHandleValue(handle: 0x0001, value: [1])], to: conn)
        }
    }
}
