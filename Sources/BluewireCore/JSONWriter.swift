/// Builds one JSON value as text, without Foundation.
///
/// Strings are escaped as RFC 8259 §7 requires: quote, backslash and every control character below
/// U+0020 are escaped, everything else is written as UTF-8. Device names and logging text in captures
/// are arbitrary bytes, so this matters: a name holding a quote or a newline must not break a line of
/// JSON output.
///
/// The one JSON writer of the project: the decoder's and the command line's JSON lines are built
/// with it, and BluewireGATT's database export serializes `JSONValue` trees through the same
/// escaping (`appendQuoted(_:to:)` on bytes).
public struct JSONWriter: Sendable {
    public private(set) var text: String = ""
    /// One entry per open object/array: whether a value was already written in it.
    private var hasValue: [Bool] = [false]
    private var afterKey = false

    public init() {}

    /// A writer whose text has room for `capacity` UTF-8 bytes before it grows (a JSON line per
    /// packet: one allocation instead of one per doubling).
    public init(reservingCapacity capacity: Int) {
        text.reserveCapacity(capacity)
    }

    /// Opens an object (as a value, or as the value of the key just written).
    public mutating func beginObject() {
        separate()
        text.append("{")
        hasValue.append(false)
    }

    public mutating func endObject() {
        text.append("}")
        if hasValue.count > 1 { hasValue.removeLast() }
    }

    public mutating func beginArray() {
        separate()
        text.append("[")
        hasValue.append(false)
    }

    public mutating func endArray() {
        text.append("]")
        if hasValue.count > 1 { hasValue.removeLast() }
    }

    /// Writes `"key":`; the next value written belongs to it.
    public mutating func key(_ name: String) {
        separate()
        JSONWriter.appendQuoted(name, to: &text)
        text.append(":")
        afterKey = true
    }

    public mutating func string(_ value: String) {
        separate()
        JSONWriter.appendQuoted(value, to: &text)
    }

    public mutating func integer<T: BinaryInteger>(_ value: T) {
        separate()
        text.append(String(value))
    }

    /// A number already formatted as JSON (RFC 8259 §6), e.g. a decimal the caller rounded.
    public mutating func number(text: String) {
        separate()
        text.isEmpty ? self.text.append("null") : self.text.append(text)
    }

    public mutating func bool(_ value: Bool) {
        separate()
        text.append(value ? "true" : "false")
    }

    public mutating func null() {
        separate()
        text.append("null")
    }

    /// A key and a string value.
    public mutating func field(_ name: String, _ value: String) {
        key(name)
        string(value)
    }

    /// A key and an integer value.
    public mutating func field<T: BinaryInteger>(_ name: String, _ value: T) {
        key(name)
        integer(value)
    }

    private mutating func separate() {
        if afterKey {
            afterKey = false
            return
        }
        let last = hasValue.count - 1
        if hasValue[last] { text.append(",") }
        hasValue[last] = true
    }

    /// Appends `value` as a quoted, escaped JSON string.
    public static func appendQuoted(_ value: String, to out: inout String) {
        out.append("\"")
        // Almost every string a decoder writes (names, hex, summaries) needs no escape: appended
        // whole, not scalar by scalar (the scalar loop made JSON lines cost 3x their text).
        if !value.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0x7F }) {
            out.append(value)
            out.append("\"")
            return
        }
        for scalar in value.unicodeScalars {
            switch scalar.value {
            case 0x22: out.append("\\\"")
            case 0x5C: out.append("\\\\")
            case 0x0A: out.append("\\n")
            case 0x0D: out.append("\\r")
            case 0x09: out.append("\\t")
            case 0x08: out.append("\\b")
            case 0x0C: out.append("\\f")
            case 0x00..<0x20, 0x7F:
                out.append("\\u00")
                out.append(hex(UInt8(truncatingIfNeeded: scalar.value), width: 2))
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        out.append("\"")
    }

    /// `appendQuoted` into UTF-8 bytes, with the same escapes.
    public static func appendQuoted(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case 0x22: appendASCII("\\\"", to: &out)
            case 0x5C: appendASCII("\\\\", to: &out)
            case 0x0A: appendASCII("\\n", to: &out)
            case 0x0D: appendASCII("\\r", to: &out)
            case 0x09: appendASCII("\\t", to: &out)
            case 0x08: appendASCII("\\b", to: &out)
            case 0x0C: appendASCII("\\f", to: &out)
            case 0x00..<0x20, 0x7F:
                appendASCII("\\u00", to: &out)
                out.append(contentsOf: hex(byte, width: 2).utf8)
            default:
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Appends ASCII text without going through `String`.
    public static func appendASCII(_ text: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `value` as a quoted, escaped JSON string.
    public static func quoted(_ value: String) -> String {
        var out = ""
        appendQuoted(value, to: &out)
        return out
    }
}
