import BluewireCore

/// Why a JSON text was rejected, and where: byte offset plus 1-based line and column (in bytes), so a
/// person can find the spot in an editor.
public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Reason: Equatable, Sendable {
        /// The text ended inside a value.
        case unexpectedEnd
        /// A byte that cannot start or continue the expected token.
        case unexpectedCharacter(UInt8)
        /// A number that does not follow RFC 8259 §6 (leading zeros, a lone minus, `1.`).
        case invalidNumber
        /// A backslash escape other than `\" \\ \/ \b \f \n \r \t \uXXXX`.
        case invalidEscape
        /// A `\u` escape with bad hex digits or an unpaired surrogate.
        case invalidUnicodeEscape
        /// An unescaped control character (below U+0020) inside a string (RFC 8259 §7).
        case controlCharacterInString
        /// Bytes that are not well-formed UTF-8 (RFC 8259 §8.1).
        case invalidUTF8
        /// Arrays and objects nested deeper than the parser allows.
        case nestingTooDeep(limit: Int)
        /// An object with the same key twice (RFC 8259 §4 leaves the meaning open; a strict reader refuses).
        case duplicateKey(String)
        /// Something other than whitespace after the top-level value.
        case trailingContent
    }

    public var reason: Reason
    /// Byte offset from the start of the text.
    public var offset: Int
    /// 1-based line.
    public var line: Int
    /// 1-based column, counted in bytes.
    public var column: Int

    public init(_ reason: Reason, offset: Int, line: Int, column: Int) {
        self.reason = reason
        self.offset = offset
        self.line = line
        self.column = column
    }

    /// An error at `offset` in `source`, with line and column worked out from it.
    public init(_ reason: Reason, offset: Int, in source: ArraySlice<UInt8>) {
        let position = TextPosition(offset: offset, in: source)
        self.init(reason, offset: offset, line: position.line, column: position.column)
    }

    public var description: String {
        let what: String
        switch reason {
        case .unexpectedEnd: what = "unexpected end of text"
        case .unexpectedCharacter(let byte):
            what = byte >= 0x20 && byte < 0x7F
                ? "unexpected character '" + String(decoding: [byte], as: UTF8.self) + "'"
                : "unexpected byte 0x" + hex(byte, width: 2)
        case .invalidNumber: what = "invalid number"
        case .invalidEscape: what = "invalid escape sequence"
        case .invalidUnicodeEscape: what = "invalid \\u escape"
        case .controlCharacterInString: what = "control character in string"
        case .invalidUTF8: what = "invalid UTF-8"
        case .nestingTooDeep(let limit): what = "nesting deeper than \(limit)"
        case .duplicateKey(let key): what = "duplicate key \"" + key + "\""
        case .trailingContent: what = "content after the top-level value"
        }
        return "line \(line), column \(column) (offset \(offset)): " + what
    }
}

/// A 1-based line and byte column of an offset in a text.
public struct TextPosition: Equatable, Sendable {
    public var line: Int
    public var column: Int

    public init(offset: Int, in source: ArraySlice<UInt8>) {
        var line = 1
        var lineStart = 0
        var index = 0
        for byte in source {
            if index >= offset { break }
            if byte == 0x0A {
                line += 1
                lineStart = index + 1
            }
            index += 1
        }
        self.line = line
        self.column = offset - lineStart + 1
    }
}
