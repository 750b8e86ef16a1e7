import BluewireCore
import Testing
@testable import BluewireGATT

/// A comparable view of an attribute (attributes themselves hold closures).
struct AttributeRow: Equatable, CustomStringConvertible {
    var handle: UInt16
    var type: BluetoothUUID
    var value: [UInt8]?
    var permissions: AttributePermissions

    init(_ attribute: GATTAttribute) {
        handle = attribute.handle
        type = attribute.type
        value = attribute.cachedValue
        permissions = attribute.permissions
    }

    init(_ handle: UInt16, _ type: UInt16, _ value: [UInt8], _ permissions: AttributePermissions) {
        self.handle = handle
        self.type = BluetoothUUID(type)
        self.value = value
        self.permissions = permissions
    }

    var description: String { "0x\(hex(handle, width: 4)) \(type.shortString) \(hexString(value ?? [])) \(permissions.fileNames)" }
}

func rows(_ database: GATTDatabase) -> [AttributeRow] { database.attributes.map(AttributeRow.init) }

func loadFailure(_ text: String) -> GATTDatabaseFileError? {
    do {
        _ = try GATTDatabase(json: text)
        return nil
    } catch {
        return error
    }
}

@Suite struct GATTDatabaseFileTests {
    static let designExample = """
        { "attributes": [
          { "handle": "0x0001", "type": "0x2800", "value": "0118", "perms": ["read"] },
          { "handle": "0x0002", "type": "0x2803", "value": "020300002a", "perms": ["read"] },
          { "handle": "0x0003", "type": "0x2a00", "value": "426c75655a", "perms": ["read"] } ] }
        """

    @Test func attributeTableFromTheDesignLoadsExactly() throws {
        let database = try GATTDatabase(json: Self.designExample)
        #expect(rows(database) == [
            AttributeRow(1, 0x2800, [0x01, 0x18], [.read]),
            AttributeRow(2, 0x2803, [0x02, 0x03, 0x00, 0x00, 0x2A], [.read]),
            AttributeRow(3, 0x2A00, Array("BlueZ".utf8), [.read]),
        ])
        #expect(database.characteristic(valueHandle: 3)?.properties == [.read])
    }

    @Test func explicitHandlesWithGapsAndEveryPermissionAreKept() throws {
        let text = """
            {"attributes":[
             {"handle":"0x0010","type":"0x2800","value":"0f18","perms":["read"]},
             {"handle":32,"type":"0x2803","value":"1a2200192a","perms":["read"]},
             {"handle":"0x0022","type":"0x2a19","value":"64","perms":["read_encrypted","write_authenticated"]},
             {"handle":"0x0023","type":"0x2902","value":"0000","perms":["read","write","read_authenticated","write_encrypted"]},
             {"handle":"0xFFFF","type":"6e400001-b5a3-f393-e0a9-e50e24dcca9e"}
            ]}
            """
        let database = try GATTDatabase(json: text)
        #expect(database.attributes.map(\.handle) == [0x0010, 0x0020, 0x0022, 0x0023, 0xFFFF])
        #expect(database[handle: 0x22]?.permissions == [.readEncrypted, .writeAuthenticated])
        #expect(database[handle: 0x23]?.permissions == [.read, .write, .readAuthenticated, .writeEncrypted])
        #expect(database[handle: 0xFFFF]?.type == BluetoothUUID(parsing: "6e400001-b5a3-f393-e0a9-e50e24dcca9e"))
        #expect(database[handle: 0xFFFF]?.cachedValue == [])
        #expect(database[handle: 0xFFFF]?.permissions == [])
        #expect(database.characteristic(valueHandle: 0x22)?.clientConfigurationHandle == 0x23)
    }

    @Test func exportWritesTheDesignLayoutAndLoadsBackIdentically() throws {
        let database = try GATTDatabase(json: Self.designExample)
        let exported = database.exportJSON()
        #expect(exported == """
            { "attributes": [
              { "handle": "0x0001", "type": "0x2800", "value": "0118", "perms": ["read"] },
              { "handle": "0x0002", "type": "0x2803", "value": "020300002a", "perms": ["read"] },
              { "handle": "0x0003", "type": "0x2a00", "value": "426c75655a", "perms": ["read"] }
            ] }

            """)
        #expect(rows(try GATTDatabase(json: exported)) == rows(database))
        #expect(GATTDatabase().exportJSON() == "{ \"attributes\": [] }\n")
    }

    @Test func builtDatabasesRoundTripThroughExport() throws {
        var builder = GATTDatabaseBuilder()
        let hid = try builder.addService(BluetoothUUID(high: 0x1234, low: 0x5678), kind: .secondary)
        try builder.addCharacteristic(
            BluetoothUUID(uint32: 0x1234_5678), properties: [.read, .indicate], permissions: [.readAuthenticated],
            value: .cached([1, 2, 3]), clientConfigurationPermissions: [.read, .writeEncrypted])
        try builder.addService(BluetoothUUID(0x180F))
        try builder.addIncludedService(hid)
        let database = builder.build()
        let reloaded = try GATTDatabase(json: database.exportJSON())
        #expect(rows(reloaded) == rows(database))
        #expect(reloaded.characteristics == database.characteristics)
    }

    @Test func badJSONIsASyntaxErrorWithPosition() {
        let error = loadFailure("{ \"attributes\": [\n  { \"handle\": \"0x0001\", }\n] }")
        #expect(error == GATTDatabaseFileError(.syntax(.unexpectedCharacter(UInt8(ascii: "}"))), offset: 42, line: 2, column: 25))
        #expect(error?.description == "line 2, column 25 (offset 42): unexpected character '}'")
    }

    @Test func schemaMistakesPointAtTheOffendingToken() {
        #expect(loadFailure(#"{"attributes":[{"handle":"0x0000","type":"0x2800"}]}"#)
            == GATTDatabaseFileError(.invalidHandle("\"0x0000\""), offset: 25, line: 1, column: 26))
        #expect(loadFailure(#"{"attributes":[{"handle":70000,"type":"0x2800"}]}"#)?.reason == .invalidHandle("70000"))
        #expect(loadFailure(#"{"attributes":[{"handle":"12","type":"0x2800"}]}"#)?.reason == .invalidHandle("\"12\""))
        #expect(loadFailure("{\"attributes\":[\n{\"handle\":2,\"type\":\"0x2800\"},\n{\"handle\":2,\"type\":\"0x2800\"}]}")
            == GATTDatabaseFileError(.handleNotAscending(2), offset: 56, line: 3, column: 11))
        #expect(loadFailure(#"{"attributes":[{"handle":1,"type":"0x28"}]}"#)
            == GATTDatabaseFileError(.invalidUUID("0x28"), offset: 34, line: 1, column: 35))
        #expect(loadFailure(#"{"attributes":[{"handle":1,"type":"0x2800","value":"abc"}]}"#)?.reason == .invalidHex("abc"))
        #expect(loadFailure(#"{"attributes":[{"handle":1,"type":"0x2800","perms":["reed"]}]}"#)
            == GATTDatabaseFileError(.unknownPermission("reed"), offset: 52, line: 1, column: 53))
        #expect(loadFailure(#"{"attributes":[{"handle":1}]}"#)
            == GATTDatabaseFileError(.missingKey("type"), offset: 15, line: 1, column: 16))
        #expect(loadFailure(#"{"attributes":[{"handle":1,"type":"0x2800","perm":[]}]}"#)?.reason == .unknownKey("perm"))
        #expect(loadFailure(#"{"attributes":[{"handle":1,"type":2800}]}"#)?.reason == .wrongType(key: "type", expected: "a string"))
        #expect(loadFailure(#"{"attributes":{}}"#)?.reason == .wrongType(key: "attributes", expected: "an array"))
        #expect(loadFailure(#"{"attributes":[], "services":[]}"#)?.reason == .unknownForm)
        #expect(loadFailure(#"[]"#)?.reason == .unknownForm)
        #expect(loadFailure(#"{"atributes":[]}"#)?.reason == .unknownKey("atributes"))
        let long = String(repeating: "00", count: 513)
        #expect(loadFailure(#"{"attributes":[{"handle":1,"type":"0x2a00","value":""# + long + #""}]}"#)?.reason
            == .database(.valueTooLong(handle: 0, length: 513)))
    }
}

@Suite struct GATTDatabaseServiceFileTests {
    @Test func servicesFormAssignsHandlesAndGeneratesDeclarations() throws {
        let text = """
            { "services": [
              { "uuid": "0x180f", "id": "battery", "secondary": true,
                "characteristics": [
                  { "uuid": "0x2a19", "properties": ["read", "notify"], "value": "64",
                    "descriptors": [ { "uuid": "0x2901", "text": "Level" } ] } ] },
              { "uuid": "0x1800", "handle": "0x0010", "includes": ["battery"],
                "characteristics": [
                  { "uuid": "0x2a00", "properties": ["read", "write"], "text": "Bluewire",
                    "perms": ["read", "write_encrypted"] },
                  { "uuid": "0x2a05", "properties": ["indicate"], "cccd_perms": ["read", "write_encrypted"] } ] } ] }
            """
        let database = try GATTDatabase(json: text)
        #expect(rows(database) == [
            AttributeRow(0x01, 0x2801, [0x0F, 0x18], [.read]),
            AttributeRow(0x02, 0x2803, [0x12, 0x03, 0x00, 0x19, 0x2A], [.read]),
            AttributeRow(0x03, 0x2A19, [0x64], [.read]),
            AttributeRow(0x04, 0x2902, [0x00, 0x00], [.read, .write]),
            AttributeRow(0x05, 0x2901, Array("Level".utf8), [.read]),
            AttributeRow(0x10, 0x2800, [0x00, 0x18], [.read]),
            AttributeRow(0x11, 0x2802, [0x01, 0x00, 0x05, 0x00, 0x0F, 0x18], [.read]),
            AttributeRow(0x12, 0x2803, [0x0A, 0x13, 0x00, 0x00, 0x2A], [.read]),
            AttributeRow(0x13, 0x2A00, Array("Bluewire".utf8), [.read, .writeEncrypted]),
            AttributeRow(0x14, 0x2803, [0x20, 0x15, 0x00, 0x05, 0x2A], [.read]),
            AttributeRow(0x15, 0x2A05, [], []),
            AttributeRow(0x16, 0x2902, [0x00, 0x00], [.read, .writeEncrypted]),
        ])
    }

    @Test func permissionsDefaultFromProperties() throws {
        let database = try GATTDatabase(json: """
            {"services":[{"uuid":"0x1234","characteristics":[
              {"uuid":"0x2a01","properties":["read"]},
              {"uuid":"0x2a02","properties":["write_without_response"]},
              {"uuid":"0x2a03","properties":["notify"]}]}]}
            """)
        #expect(database[handle: 3]?.permissions == [.read])
        #expect(database[handle: 5]?.permissions == [.write])
        #expect(database[handle: 7]?.permissions == [])
    }

    @Test func servicesFormMistakesAreTypedAndPositioned() {
        #expect(loadFailure(#"{"services":[{"uuid":"0x1800","includes":["gap"]}]}"#)
            == GATTDatabaseFileError(.unknownServiceID("gap"), offset: 42, line: 1, column: 43))
        #expect(loadFailure(#"{"services":[{"uuid":"0x1800","id":"a"},{"uuid":"0x1801","id":"a"}]}"#)?.reason
            == .duplicateServiceID("a"))
        #expect(loadFailure(#"{"services":[{"uuid":"0x1800","characteristics":[{"uuid":"0x2a00"}]}]}"#)?.reason
            == .missingKey("properties"))
        #expect(loadFailure(#"{"services":[{"uuid":"0x1800","characteristics":[{"uuid":"0x2a00","properties":["reads"]}]}]}"#)?.reason
            == .unknownProperty("reads"))
        #expect(loadFailure(#"{"services":[{"uuid":"0x1800","characteristics":[{"uuid":"0x2a00","properties":[],"value":"00","text":"a"}]}]}"#)?.reason
            == .conflictingKeys("value", "text"))
        #expect(loadFailure(#"{"services":[{"uuid":"0x1800","handle":5},{"uuid":"0x1801","handle":3}]}"#)?.reason
            == .handleNotAscending(3))
        #expect(loadFailure(#"{"services":[{"uuid":"0x1800","secondary":"yes"}]}"#)?.reason
            == .wrongType(key: "secondary", expected: "true or false"))
        #expect(loadFailure(#"{"services":[{"uuid":"0x1800","handle":65535,"characteristics":[{"uuid":"0x2a00","properties":[]}]}]}"#)?.reason
            == .database(.outOfHandles))
    }
}
