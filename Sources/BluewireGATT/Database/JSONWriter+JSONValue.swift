import BluewireCore

/// Serializes `JSONValue`s as RFC 8259 text without Foundation.
///
/// Output is deterministic: members keep their order, strings are escaped minimally (quote, backslash,
/// control characters) and everything else is written as UTF-8.
extension JSONWriter {
    /// How much whitespace to put between tokens.
    public enum Style: Sendable {
        /// `{"a":1,"b":[1,2]}`
        case compact
        /// `{ "a": 1, "b": [1, 2] }` on one line.
        case spaced
    }

    /// The JSON text of `value`.
    public static func serialize(_ value: JSONValue, style: Style = .compact) -> String {
        var out: [UInt8] = []
        write(value, style: style, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the JSON text of `value` to `out`.
    public static func write(_ value: JSONValue, style: Style, into out: inout [UInt8]) {
        switch value.kind {
        case .null: appendASCII("null", to: &out)
        case .bool(let flag): appendASCII(flag ? "true" : "false", to: &out)
        case .number(let number): out.append(contentsOf: number.text.utf8)
        case .string(let text): writeString(text, into: &out)
        case .array(let items):
            if items.isEmpty {
                appendASCII("[]", to: &out)
                return
            }
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { appendASCII(style == .compact ? "," : ", ", to: &out) }
                write(item, style: style, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            if members.isEmpty {
                appendASCII("{}", to: &out)
                return
            }
            appendASCII(style == .compact ? "{" : "{ ", to: &out)
            for (i, member) in members.enumerated() {
                if i > 0 { appendASCII(style == .compact ? "," : ", ", to: &out) }
                writeString(member.key, into: &out)
                appendASCII(style == .compact ? ":" : ": ", to: &out)
                write(member.value, style: style, into: &out)
            }
            appendASCII(style == .compact ? "}" : " }", to: &out)
        }
    }

    /// Appends `text` as a quoted JSON string.
    public static func writeString(_ text: String, into out: inout [UInt8]) {
        appendQuoted(text, to: &out)
    }
}
