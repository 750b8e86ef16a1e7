/// Why a GATT database file was rejected, and where: byte offset plus 1-based line and column of the
/// offending JSON token (for a missing key: the object that lacks it).
public struct GATTDatabaseFileError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Reason: Equatable, Sendable {
        /// The text is not valid JSON.
        case syntax(JSONParseError.Reason)
        /// The top level must be an object with exactly one of `attributes` or `services`.
        case unknownForm
        /// A required key is absent.
        case missingKey(String)
        /// A key the format does not define (refused so that typos do not silently do nothing).
        case unknownKey(String)
        /// A value of the wrong JSON kind.
        case wrongType(key: String, expected: String)
        /// A handle that is not `0x0001`–`0xFFFF` (hex string) or 1–65535 (integer).
        case invalidHandle(String)
        /// Handles must strictly increase through the table.
        case handleNotAscending(UInt16)
        /// Not a 16-, 32- or 128-bit UUID.
        case invalidUUID(String)
        /// A value that is not an even number of hex digits.
        case invalidHex(String)
        /// A permission name other than read, write, read_encrypted, write_encrypted, read_authenticated,
        /// write_authenticated.
        case unknownPermission(String)
        /// A characteristic property name not in `CharacteristicProperties.fileNames`.
        case unknownProperty(String)
        /// Both `value` and `text` were given.
        case conflictingKeys(String, String)
        /// An `includes` entry naming no earlier service `id`.
        case unknownServiceID(String)
        /// Two services with the same `id`.
        case duplicateServiceID(String)
        /// The attributes do not make a valid database (too many handles, a value over 512 bytes, ...).
        case database(GATTDatabaseError)
    }

    public var reason: Reason
    /// Byte offset from the start of the file.
    public var offset: Int
    /// 1-based line.
    public var line: Int
    /// 1-based column, in bytes.
    public var column: Int

    public init(_ reason: Reason, offset: Int, line: Int, column: Int) {
        self.reason = reason
        self.offset = offset
        self.line = line
        self.column = column
    }

    public var description: String {
        let what: String
        switch reason {
        case .syntax(let syntax):
            let parseError = JSONParseError(syntax, offset: offset, line: line, column: column)
            return parseError.description
        case .unknownForm: what = "expected an object with \"attributes\" or \"services\""
        case .missingKey(let key): what = "missing \"" + key + "\""
        case .unknownKey(let key): what = "unknown key \"" + key + "\""
        case .wrongType(let key, let expected): what = "\"" + key + "\" must be " + expected
        case .invalidHandle(let text): what = "invalid handle " + text
        case .handleNotAscending(let handle): what = "handle \(handle) is not above the previous one"
        case .invalidUUID(let text): what = "invalid UUID \"" + text + "\""
        case .invalidHex(let text): what = "invalid hex value \"" + text + "\""
        case .unknownPermission(let name): what = "unknown permission \"" + name + "\""
        case .unknownProperty(let name): what = "unknown property \"" + name + "\""
        case .conflictingKeys(let a, let b): what = "\"" + a + "\" and \"" + b + "\" are exclusive"
        case .unknownServiceID(let id): what = "no earlier service with id \"" + id + "\""
        case .duplicateServiceID(let id): what = "service id \"" + id + "\" used twice"
        case .database(let error): what = error.description
        }
        return "line \(line), column \(column) (offset \(offset)): " + what
    }
}
