/// A JSON value with the byte offset where it starts in its source, so that a schema error found after
/// parsing (a bad handle, an unknown permission) can still say where it is.
///
/// Equality compares content only, never offsets.
public struct JSONValue: Equatable, Sendable {
    /// What the value is.
    public enum Kind: Equatable, Sendable {
        case null
        case bool(Bool)
        case number(JSONNumber)
        case string(String)
        case array([JSONValue])
        /// Members in source order (JSON objects are ordered here so that output is stable).
        case object([JSONMember])
    }

    public var kind: Kind
    /// Byte offset of the value's first character in the parsed text (0 for values built in code).
    public var offset: Int

    @inlinable
    public init(_ kind: Kind, offset: Int = 0) {
        self.kind = kind
        self.offset = offset
    }

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.kind == rhs.kind }

    public static func string(_ text: String) -> JSONValue { JSONValue(.string(text)) }
    public static func integer(_ value: Int64) -> JSONValue { JSONValue(.number(JSONNumber(value))) }
    public static func bool(_ value: Bool) -> JSONValue { JSONValue(.bool(value)) }
    public static func array(_ items: [JSONValue]) -> JSONValue { JSONValue(.array(items)) }
    public static func object(_ members: [JSONMember]) -> JSONValue { JSONValue(.object(members)) }
    public static var null: JSONValue { JSONValue(.null) }

    /// The text, if this is a string.
    public var stringValue: String? {
        if case .string(let text) = kind { return text }
        return nil
    }

    /// The members, if this is an object.
    public var objectMembers: [JSONMember]? {
        if case .object(let members) = kind { return members }
        return nil
    }

    /// The elements, if this is an array.
    public var arrayElements: [JSONValue]? {
        if case .array(let items) = kind { return items }
        return nil
    }

    /// The value, if this is a boolean.
    public var boolValue: Bool? {
        if case .bool(let value) = kind { return value }
        return nil
    }

    /// The integer, if this is a number written without fraction or exponent that fits in 64 bits.
    public var integerValue: Int64? {
        if case .number(let number) = kind { return number.integer }
        return nil
    }

    /// The member named `key`, if this is an object that has one.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = kind else { return nil }
        for member in members where member.key == key { return member.value }
        return nil
    }

    /// A short name of the kind, for error messages ("object", "string", ...).
    public var kindName: String {
        switch kind {
        case .null: return "null"
        case .bool: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

/// One `"key": value` member of a JSON object.
public struct JSONMember: Equatable, Sendable {
    public var key: String
    /// Byte offset of the key's opening quote.
    public var keyOffset: Int
    public var value: JSONValue

    @inlinable
    public init(_ key: String, _ value: JSONValue, keyOffset: Int = 0) {
        self.key = key
        self.value = value
        self.keyOffset = keyOffset
    }

    public static func == (lhs: JSONMember, rhs: JSONMember) -> Bool { lhs.key == rhs.key && lhs.value == rhs.value }
}

/// A JSON number, kept as its source text so nothing is lost to binary floating point
/// (Embedded Swift has no locale-free float parser), with the integer value when it is one.
public struct JSONNumber: Equatable, Sendable {
    /// The number as written (RFC 8259 §6 grammar).
    public var text: String
    /// The value when `text` is an integer (no fraction, no exponent) within Int64.
    public var integer: Int64?

    public init(_ value: Int64) {
        integer = value
        text = String(value)
    }

    /// Wraps already-validated number text.
    init(validatedText: String, integer: Int64?) {
        self.text = validatedText
        self.integer = integer
    }

    public static func == (lhs: JSONNumber, rhs: JSONNumber) -> Bool { lhs.text == rhs.text }
}
