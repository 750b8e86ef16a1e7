import BluewireATT
import BluewireCore
import Testing
@testable import BluewireGATT

/// A cached value is fixed by the application and read-only to centrals; anything a central may write
/// is a dynamic value (Docs/Design.md, "Peripheral role"; Docs/DatabaseFormat.md).
@Suite struct GATTServerCachedValueTests {
    /// Handles 1–3: a GAP service, a characteristic declaration, a cached value that the attribute list
    /// gives write permission (only `GATTDatabase(attributes:)` keeps such a combination).
    static func cachedWritableDatabase() throws -> GATTDatabase {
        try GATTDatabase(attributes: [
            GATTAttribute(handle: 1, type: .primaryService, permissions: .read, bytes: [0x00, 0x18]),
            GATTAttribute(handle: 2, type: .characteristic, permissions: .read, bytes: [0x0A, 0x03, 0x00, 0x00, 0x2A]),
            GATTAttribute(handle: 3, type: .deviceName, permissions: [.read, .write], bytes: Array("fixed".utf8)),
        ])
    }

    @Test func aCentralsWriteToACachedValueIsWriteNotPermittedAndChangesNothing() throws {
        var server = GATTServer(database: try Self.cachedWritableDatabase())
        server.connect(conn)
        // Write Request: Error Response, Write Not Permitted (0x03), naming the handle.
        #expect(server.exchange([0x12, 0x03, 0x00, 0x41]) == [0x01, 0x12, 0x03, 0x00, 0x03])
        // Write Command: dropped (commands get no answer).
        #expect(server.exchange([0x52, 0x03, 0x00, 0x41]) == nil)
        // Prepare Write: refused at once, so nothing is queued for Execute Write.
        #expect(server.exchange([0x16, 0x03, 0x00, 0x00, 0x00, 0x41]) == [0x01, 0x16, 0x03, 0x00, 0x03])
        #expect(server.exchange([0x18, 0x01]) == [0x19])
        #expect(server.database[handle: 0x03]?.cachedValue == Array("fixed".utf8))
        #expect(server.takeEvents().isEmpty)
        // The application still sets it.
        try server.database.setValue(Array("new".utf8), for: 0x03)
        #expect(server.exchange([0x0A, 0x03, 0x00]) == [0x0B] + Array("new".utf8))
    }

    @Test func theBuilderMakesAWritableCachedValueADynamicValueTheServerKeeps() throws {
        var builder = GATTDatabaseBuilder()
        try builder.addService(BluetoothUUID(0xFFE0))
        let writable = try builder.addCharacteristic(
            BluetoothUUID(0xFFE1), properties: [.read, .write, .notify], permissions: [.read, .write], value: .cached([1]))
        let fixed = try builder.addCharacteristic(BluetoothUUID(0xFFE2), properties: [.read], permissions: [.read], value: .cached([2]))
        var server = GATTServer(database: builder.build())
        server.connect(conn)
        guard case .dynamic(let dynamic)? = server.database[handle: writable.valueHandle]?.value else {
            Issue.record("a writable value must be dynamic")
            return
        }
        #expect(dynamic.stored == [1] && dynamic.read == nil && dynamic.write == nil)
        guard case .cached([2])? = server.database[handle: fixed.valueHandle]?.value else {
            Issue.record("a read-only value stays cached")
            return
        }
        // The CCCD stays per client, as given.
        guard case .cached? = server.database[handle: writable.clientConfigurationHandle ?? 0]?.value else {
            Issue.record("the CCCD stays cached")
            return
        }
        let handle = [UInt8(truncatingIfNeeded: writable.valueHandle), UInt8(truncatingIfNeeded: writable.valueHandle >> 8)]
        #expect(server.exchange([0x12] + handle + [7, 8]) == [0x13])
        #expect(server.takeEvents() == [.valueWritten(connection: conn, handle: writable.valueHandle, value: [7, 8])])
        #expect(server.exchange([0x0A] + handle) == [0x0B, 7, 8])
        // A long write (Prepare Write, Execute Write) is assembled and kept whole.
        #expect(server.exchange([0x16] + handle + [0x00, 0x00, 1, 2]) == [0x17] + handle + [0x00, 0x00, 1, 2])
        #expect(server.exchange([0x16] + handle + [0x02, 0x00, 3]) == [0x17] + handle + [0x02, 0x00, 3])
        #expect(server.exchange([0x18, 0x01]) == [0x19])
        #expect(server.database[handle: writable.valueHandle]?.cachedValue == [1, 2, 3])
        #expect(server.takeEvents() == [.valueWritten(connection: conn, handle: writable.valueHandle, value: [1, 2, 3])])
    }

    @Test func aDatabaseFileLoadsWritableValuesAsDynamicAndReadOnlyOnesAsCached() throws {
        let services = try GATTDatabase(json: """
            { "services": [ { "uuid": "0xffe0", "characteristics": [
                { "uuid": "0xffe1", "properties": ["read", "write", "notify"], "value": "01",
                  "descriptors": [ { "uuid": "0x2901", "perms": ["read", "write"], "text": "w" },
                                   { "uuid": "0x2904", "perms": ["read"], "text": "r" } ] },
                { "uuid": "0xffe2", "properties": ["read"], "value": "02" } ] } ] }
            """)
        let kinds = services.attributes.filter { $0.type != .characteristic && $0.type != .primaryService }.map { attribute -> String in
            if case .dynamic(let dynamic) = attribute.value { return "dynamic \(dynamic.stored ?? [])" }
            return "cached"
        }
        // Value 0xFFE1, its CCCD (per client), the writable and the read-only descriptor, value 0xFFE2.
        #expect(kinds == ["dynamic [1]", "cached", "dynamic [119]", "cached", "cached"])

        let attributes = try GATTDatabase(json: """
            { "attributes": [
              { "handle": "0x0001", "type": "0x2800", "value": "e0ff", "perms": ["read"] },
              { "handle": "0x0002", "type": "0x2803", "value": "0a0300e1ff", "perms": ["read"] },
              { "handle": "0x0003", "type": "0xffe1", "value": "01", "perms": ["read", "write"] } ] }
            """)
        guard case .dynamic(let dynamic)? = attributes[handle: 3]?.value else {
            Issue.record("a writable attribute of the attribute form must be dynamic")
            return
        }
        #expect(dynamic.stored == [1])
    }
}
