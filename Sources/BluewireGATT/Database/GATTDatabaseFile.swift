import BluewireCore

/// Loading a database from a JSON file (the `serve --db FILE.json` format).
///
/// Two forms are accepted; the top-level object has exactly one of these keys.
///
/// **Attribute table** (`attributes`): every attribute with its handle, exactly as a device exposed it,
/// so a table recorded by `analyze --export-db` is served again handle for handle:
///
/// ```json
/// { "attributes": [
///   { "handle": "0x0001", "type": "0x2800", "value": "0118", "perms": ["read"] },
///   { "handle": "0x0002", "type": "0x2803", "value": "020300002a", "perms": ["read"] },
///   { "handle": "0x0003", "type": "0x2a00", "value": "426c75655a", "perms": ["read"] } ] }
/// ```
/// `handle` is a hex string (`"0x0001"`) or an integer, strictly ascending, never 0. `type` is a 16-bit
/// (`"0x2a00"`), 32-bit or 128-bit UUID string. `value` is hex (default empty). `perms` lists read,
/// write, read_encrypted, write_encrypted, read_authenticated, write_authenticated (default none).
/// Declarations are served as written: characteristic properties live in the 0x2803 value.
///
/// **Services** (`services`): handles assigned in order, declarations and CCCDs generated:
///
/// ```json
/// { "services": [
///   { "uuid": "0x180f", "id": "battery",
///     "characteristics": [
///       { "uuid": "0x2a19", "properties": ["read", "notify"], "value": "64",
///         "descriptors": [ { "uuid": "0x2901", "perms": ["read"], "text": "Battery" } ] } ] },
///   { "uuid": "0x1812", "includes": ["battery"], "characteristics": [] } ] }
/// ```
/// Service keys: `uuid` (required); `secondary` (boolean, default false); `handle` (optional handle of
/// the service declaration, at or above the next free one, to leave gaps); `id` (a name other services'
/// `includes` use; a service can only include one listed before it); `includes`; `characteristics`.
/// Characteristic keys: `uuid`, `properties` (required; broadcast, read, write_without_response, write,
/// notify, indicate, authenticated_signed_writes, extended_properties); `perms` (default: read if the
/// read property is set, write if any write property is); `value` (hex) or `text` (UTF-8), default
/// empty; `cccd_perms` (default read, write; used when notify or indicate adds the CCCD);
/// `descriptors`. Descriptor keys: `uuid`, `perms` (default read), `value` or `text`.
///
/// Every JSON or schema mistake is a `GATTDatabaseFileError` with its line, column and offset.
extension GATTDatabase {
    /// Loads a database file given as text.
    public init(json text: String) throws(GATTDatabaseFileError) {
        try self.init(jsonBytes: Array(text.utf8)[...])
    }

    /// Loads a database file given as UTF-8 bytes.
    public init(jsonBytes bytes: ArraySlice<UInt8>) throws(GATTDatabaseFileError) {
        let schema = GATTDatabaseFileSchema(source: bytes)
        let root: JSONValue
        do {
            root = try JSONParser.parse(bytes)
        } catch {
            throw GATTDatabaseFileError(.syntax(error.reason), offset: error.offset, line: error.line, column: error.column)
        }
        guard let members = root.objectMembers, members.count == 1 else {
            throw schema.error(.unknownForm, at: root.offset)
        }
        switch members[0].key {
        case "attributes": self = try GATTDatabase.loadAttributeTable(members[0].value, schema: schema)
        case "services": self = try GATTDatabase.loadServices(members[0].value, schema: schema)
        default: throw schema.error(.unknownKey(members[0].key), at: members[0].keyOffset)
        }
    }

    static func loadAttributeTable(
        _ list: JSONValue, schema: GATTDatabaseFileSchema
    ) throws(GATTDatabaseFileError) -> GATTDatabase {
        var attributes: [GATTAttribute] = []
        var previous: UInt16 = 0
        for item in try schema.array(list, key: "attributes") {
            _ = try schema.members(of: item, named: "attribute", allowed: ["handle", "type", "value", "perms"])
            let handleValue = try schema.required("handle", in: item)
            let handle = try schema.handle(handleValue)
            guard handle > previous else { throw schema.error(.handleNotAscending(handle), at: handleValue.offset) }
            previous = handle
            let type = try schema.uuid(try schema.required("type", in: item), key: "type")
            let value = try schema.valueBytesHexOnly(in: item)
            var perms: AttributePermissions = []
            if let permsValue = item["perms"] { perms = try schema.permissions(permsValue, key: "perms") }
            // Writable: a dynamic value the server keeps (a cached one is read-only to centrals).
            attributes.append(GATTAttribute(handle: handle, type: type, permissions: perms, value: GATTAttributeValue.cached(value).writable(perms, type: type)))
        }
        do {
            return try GATTDatabase(attributes: attributes)
        } catch {
            throw schema.error(.database(error), at: list.offset)
        }
    }
}

extension GATTDatabaseFileSchema {
    /// The hex `value` of an attribute-table entry (the table form has no `text`).
    func valueBytesHexOnly(in object: JSONValue) throws(GATTDatabaseFileError) -> [UInt8] {
        guard let value = object["value"] else { return [] }
        return try hexBytes(value, key: "value")
    }
}
