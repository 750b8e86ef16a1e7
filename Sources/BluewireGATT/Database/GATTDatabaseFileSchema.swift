import BluewireCore

/// Reads the fields of database-file JSON objects, turning every mistake into a positioned
/// `GATTDatabaseFileError`.
struct GATTDatabaseFileSchema {
    let source: ArraySlice<UInt8>

    func error(_ reason: GATTDatabaseFileError.Reason, at offset: Int) -> GATTDatabaseFileError {
        let position = TextPosition(offset: offset, in: source)
        return GATTDatabaseFileError(reason, offset: offset, line: position.line, column: position.column)
    }

    /// The members of `value`, refusing non-objects and keys outside `allowed`.
    func members(
        of value: JSONValue, named name: String, allowed: [String]
    ) throws(GATTDatabaseFileError) -> [JSONMember] {
        guard let members = value.objectMembers else {
            throw error(.wrongType(key: name, expected: "an object"), at: value.offset)
        }
        for member in members where !allowed.contains(member.key) {
            throw error(.unknownKey(member.key), at: member.keyOffset)
        }
        return members
    }

    func required(_ key: String, in object: JSONValue) throws(GATTDatabaseFileError) -> JSONValue {
        guard let value = object[key] else { throw error(.missingKey(key), at: object.offset) }
        return value
    }

    func string(_ value: JSONValue, key: String) throws(GATTDatabaseFileError) -> String {
        guard let text = value.stringValue else {
            throw error(.wrongType(key: key, expected: "a string"), at: value.offset)
        }
        return text
    }

    func array(_ value: JSONValue, key: String) throws(GATTDatabaseFileError) -> [JSONValue] {
        guard let items = value.arrayElements else {
            throw error(.wrongType(key: key, expected: "an array"), at: value.offset)
        }
        return items
    }

    func bool(_ value: JSONValue, key: String) throws(GATTDatabaseFileError) -> Bool {
        guard let flag = value.boolValue else {
            throw error(.wrongType(key: key, expected: "true or false"), at: value.offset)
        }
        return flag
    }

    /// `"0x0001"`–`"0xFFFF"` or an integer 1–65535.
    func handle(_ value: JSONValue) throws(GATTDatabaseFileError) -> UInt16 {
        if let number = value.integerValue {
            guard number >= 1 && number <= 0xFFFF else { throw error(.invalidHandle(String(number)), at: value.offset) }
            return UInt16(number)
        }
        guard let text = value.stringValue else {
            throw error(.wrongType(key: "handle", expected: "a hex string or an integer"), at: value.offset)
        }
        var digits = Substring(text)
        guard digits.hasPrefix("0x") || digits.hasPrefix("0X") else {
            throw error(.invalidHandle("\"" + text + "\""), at: value.offset)
        }
        digits = digits.dropFirst(2)
        guard !digits.isEmpty, digits.count <= 4, let handle = UInt16(digits, radix: 16), handle != 0 else {
            throw error(.invalidHandle("\"" + text + "\""), at: value.offset)
        }
        return handle
    }

    func uuid(_ value: JSONValue, key: String) throws(GATTDatabaseFileError) -> BluetoothUUID {
        let text = try string(value, key: key)
        guard let uuid = BluetoothUUID(parsing: text) else { throw error(.invalidUUID(text), at: value.offset) }
        return uuid
    }

    func hexBytes(_ value: JSONValue, key: String) throws(GATTDatabaseFileError) -> [UInt8] {
        let text = try string(value, key: key)
        guard let bytes = parseHex(text) else { throw error(.invalidHex(text), at: value.offset) }
        guard bytes.count <= maximumAttributeValueLength else {
            throw error(.database(.valueTooLong(handle: 0, length: bytes.count)), at: value.offset)
        }
        return bytes
    }

    /// A cached value from `value` (hex) or `text` (UTF-8), at most one of them; empty if neither.
    func valueBytes(in object: JSONValue) throws(GATTDatabaseFileError) -> [UInt8] {
        if let hexValue = object["value"] {
            if object["text"] != nil {
                throw error(.conflictingKeys("value", "text"), at: object.offset)
            }
            return try hexBytes(hexValue, key: "value")
        }
        if let textValue = object["text"] {
            let bytes = Array(try string(textValue, key: "text").utf8)
            guard bytes.count <= maximumAttributeValueLength else {
                throw error(.database(.valueTooLong(handle: 0, length: bytes.count)), at: textValue.offset)
            }
            return bytes
        }
        return []
    }

    func permissions(_ value: JSONValue, key: String) throws(GATTDatabaseFileError) -> AttributePermissions {
        var perms: AttributePermissions = []
        for item in try array(value, key: key) {
            let name = try string(item, key: key)
            guard let perm = AttributePermissions(fileName: name) else {
                throw error(.unknownPermission(name), at: item.offset)
            }
            perms.insert(perm)
        }
        return perms
    }

    func properties(_ value: JSONValue) throws(GATTDatabaseFileError) -> CharacteristicProperties {
        var properties: CharacteristicProperties = []
        for item in try array(value, key: "properties") {
            let name = try string(item, key: "properties")
            guard let property = CharacteristicProperties(fileName: name) else {
                throw error(.unknownProperty(name), at: item.offset)
            }
            properties.insert(property)
        }
        return properties
    }
}
