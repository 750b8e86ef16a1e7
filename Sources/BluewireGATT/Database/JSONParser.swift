/// A strict RFC 8259 JSON parser that needs no Foundation.
///
/// Strict means: one top-level value, no comments, no trailing commas, no leading zeros, no unescaped
/// control characters, well-formed UTF-8 only, no duplicate keys, bounded nesting. Every rejection is a
/// `JSONParseError` with the offset, line and column of the offending byte. Numbers are kept as text.
public struct JSONParser {
    /// The deepest array/object nesting accepted; deeper input is refused rather than risking the stack.
    public static let defaultMaximumDepth = 64

    let source: ArraySlice<UInt8>
    var index: Int
    let maximumDepth: Int

    /// Parses a complete JSON text.
    public static func parse(
        _ text: String, maximumDepth: Int = defaultMaximumDepth
    ) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8)[...], maximumDepth: maximumDepth)
    }

    /// Parses a complete JSON text given as UTF-8 bytes. Offsets are counted from the slice's start.
    public static func parse(
        _ bytes: ArraySlice<UInt8>, maximumDepth: Int = defaultMaximumDepth
    ) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(source: bytes, index: bytes.startIndex, maximumDepth: maximumDepth)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.endIndex else { throw parser.error(.trailingContent) }
        return value
    }

    var offset: Int { index - source.startIndex }

    func error(_ reason: JSONParseError.Reason, at position: Int? = nil) -> JSONParseError {
        JSONParseError(reason, offset: position ?? offset, in: source)
    }

    func unexpected() -> JSONParseError {
        index < source.endIndex ? error(.unexpectedCharacter(source[index])) : error(.unexpectedEnd)
    }

    mutating func skipWhitespace() {
        while index < source.endIndex {
            switch source[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard index < source.endIndex else { throw error(.unexpectedEnd) }
        let start = offset
        switch source[index] {
        case UInt8(ascii: "{"): return JSONValue(.object(try parseObject(depth: depth + 1)), offset: start)
        case UInt8(ascii: "["): return JSONValue(.array(try parseArray(depth: depth + 1)), offset: start)
        case UInt8(ascii: "\""): return JSONValue(.string(try parseString()), offset: start)
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return JSONValue(.bool(true), offset: start)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return JSONValue(.bool(false), offset: start)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return JSONValue(.null, offset: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return JSONValue(.number(try parseNumber()), offset: start)
        default:
            throw unexpected()
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        let bytes = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        for expected in bytes {
            guard index < source.endIndex else { throw error(.unexpectedEnd) }
            guard source[index] == expected else { throw error(.unexpectedCharacter(source[index])) }
            index += 1
        }
    }

    mutating func parseObject(depth: Int) throws(JSONParseError) -> [JSONMember] {
        guard depth <= maximumDepth else { throw error(.nestingTooDeep(limit: maximumDepth)) }
        index += 1  // {
        var members: [JSONMember] = []
        skipWhitespace()
        if index < source.endIndex, source[index] == UInt8(ascii: "}") {
            index += 1
            return members
        }
        while true {
            skipWhitespace()
            guard index < source.endIndex, source[index] == UInt8(ascii: "\"") else { throw unexpected() }
            let keyOffset = offset
            let key = try parseString()
            for member in members where member.key == key {
                throw error(.duplicateKey(key), at: keyOffset)
            }
            skipWhitespace()
            guard index < source.endIndex, source[index] == UInt8(ascii: ":") else { throw unexpected() }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            members.append(JSONMember(key, value, keyOffset: keyOffset))
            skipWhitespace()
            guard index < source.endIndex else { throw error(.unexpectedEnd) }
            switch source[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return members
            default: throw unexpected()
            }
        }
    }

    mutating func parseArray(depth: Int) throws(JSONParseError) -> [JSONValue] {
        guard depth <= maximumDepth else { throw error(.nestingTooDeep(limit: maximumDepth)) }
        index += 1  // [
        var items: [JSONValue] = []
        skipWhitespace()
        if index < source.endIndex, source[index] == UInt8(ascii: "]") {
            index += 1
            return items
        }
        while true {
            skipWhitespace()
            items.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < source.endIndex else { throw error(.unexpectedEnd) }
            switch source[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return items
            default: throw unexpected()
            }
        }
    }

    mutating func parseNumber() throws(JSONParseError) -> JSONNumber {
        let start = index
        var isInteger = true
        if source[index] == UInt8(ascii: "-") { index += 1 }
        guard index < source.endIndex else { throw error(.unexpectedEnd) }
        if source[index] == UInt8(ascii: "0") {
            index += 1
            if index < source.endIndex, isDigit(source[index]) { throw error(.invalidNumber) }
        } else if isDigit(source[index]) {
            while index < source.endIndex, isDigit(source[index]) { index += 1 }
        } else {
            throw error(.invalidNumber)
        }
        if index < source.endIndex, source[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < source.endIndex, isDigit(source[index]) else { throw error(.invalidNumber) }
            while index < source.endIndex, isDigit(source[index]) { index += 1 }
        }
        if index < source.endIndex, source[index] == UInt8(ascii: "e") || source[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < source.endIndex, source[index] == UInt8(ascii: "+") || source[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < source.endIndex, isDigit(source[index]) else { throw error(.invalidNumber) }
            while index < source.endIndex, isDigit(source[index]) { index += 1 }
        }
        let text = source[start..<index]
        return JSONNumber(
            validatedText: String(decoding: text, as: UTF8.self),
            integer: isInteger ? integerValue(of: text) : nil
        )
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// The Int64 value of validated integer text, or nil if it overflows.
    func integerValue(of text: ArraySlice<UInt8>) -> Int64? {
        var negative = false
        var magnitude: UInt64 = 0
        for byte in text {
            if byte == UInt8(ascii: "-") {
                negative = true
                continue
            }
            let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !o1, !o2 else { return nil }
            magnitude = sum
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return Int64(magnitude)
    }

    mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // opening quote
        var bytes: [UInt8] = []
        while true {
            guard index < source.endIndex else { throw error(.unexpectedEnd) }
            let byte = source[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: bytes, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try parseEscape(into: &bytes)
            case 0x00..<0x20:
                throw error(.controlCharacterInString)
            case 0x00..<0x80:
                bytes.append(byte)
                index += 1
            default:
                try copyUTF8Sequence(into: &bytes)
            }
        }
    }

    mutating func parseEscape(into bytes: inout [UInt8]) throws(JSONParseError) {
        let escapeStart = offset
        index += 1  // backslash
        guard index < source.endIndex else { throw error(.unexpectedEnd) }
        let byte = source[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): bytes.append(0x22)
        case UInt8(ascii: "\\"): bytes.append(0x5C)
        case UInt8(ascii: "/"): bytes.append(0x2F)
        case UInt8(ascii: "b"): bytes.append(0x08)
        case UInt8(ascii: "f"): bytes.append(0x0C)
        case UInt8(ascii: "n"): bytes.append(0x0A)
        case UInt8(ascii: "r"): bytes.append(0x0D)
        case UInt8(ascii: "t"): bytes.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = UInt32(try parseHex4())
            if scalar >= 0xD800 && scalar < 0xDC00 {
                // A high surrogate must be followed by an escaped low surrogate (RFC 8259 §7).
                guard index + 1 < source.endIndex, source[index] == UInt8(ascii: "\\"),
                      source[index + 1] == UInt8(ascii: "u") else {
                    throw error(.invalidUnicodeEscape, at: escapeStart)
                }
                index += 2
                let low = UInt32(try parseHex4())
                guard low >= 0xDC00 && low < 0xE000 else { throw error(.invalidUnicodeEscape, at: escapeStart) }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if scalar >= 0xDC00 && scalar < 0xE000 {
                throw error(.invalidUnicodeEscape, at: escapeStart)
            }
            appendUTF8(scalar, to: &bytes)
        default:
            throw error(.invalidEscape, at: escapeStart)
        }
    }

    mutating func parseHex4() throws(JSONParseError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard index < source.endIndex else { throw error(.unexpectedEnd) }
            let byte = source[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error(.invalidUnicodeEscape)
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    func appendUTF8(_ scalar: UInt32, to bytes: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            bytes.append(UInt8(scalar))
        case 0x80..<0x800:
            bytes.append(UInt8(0xC0 | scalar >> 6))
            bytes.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            bytes.append(UInt8(0xE0 | scalar >> 12))
            bytes.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            bytes.append(UInt8(0x80 | scalar & 0x3F))
        default:
            bytes.append(UInt8(0xF0 | scalar >> 18))
            bytes.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            bytes.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            bytes.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// Copies one multi-byte UTF-8 sequence, refusing overlong forms, surrogates and values past U+10FFFF
    /// (the well-formed table of Unicode §3.9, Table 3-7).
    mutating func copyUTF8Sequence(into bytes: inout [UInt8]) throws(JSONParseError) {
        let lead = source[index]
        let count: Int
        var lowerBound: UInt8 = 0x80
        var upperBound: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: count = 2
        case 0xE0: count = 3; lowerBound = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: count = 3
        case 0xED: count = 3; upperBound = 0x9F
        case 0xF0: count = 4; lowerBound = 0x90
        case 0xF1...0xF3: count = 4
        case 0xF4: count = 4; upperBound = 0x8F
        default: throw error(.invalidUTF8)
        }
        guard source.endIndex - index >= count else { throw error(.invalidUTF8) }
        let second = source[index + 1]
        guard second >= lowerBound && second <= upperBound else { throw error(.invalidUTF8) }
        var k = 2
        while k < count {
            guard source[index + k] & 0xC0 == 0x80 else { throw error(.invalidUTF8) }
            k += 1
        }
        bytes.append(contentsOf: source[index..<(index + count)])
        index += count
    }
}
