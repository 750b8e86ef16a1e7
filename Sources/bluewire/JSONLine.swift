import BluewireCore
import Foundation

/// One line of JSON output from a dictionary of plain values (Int, integers, Double, Bool, String,
/// nested dictionaries, nil/NSNull), written by the project's `JSONWriter` with keys sorted, so
/// every command's JSON lines come from one writer (Docs/CommandLine.md: snake_case keys, no
/// escaped slashes).
enum JSONLine {
    static func make(_ object: [String: any Sendable]) -> String {
        var writer = JSONWriter()
        write(object, to: &writer)
        return writer.text
    }

    static func write(_ object: [String: any Sendable], to writer: inout JSONWriter) {
        writer.beginObject()
        for key in object.keys.sorted() {
            writer.key(key)
            write(value: object[key] ?? NSNull(), to: &writer)
        }
        writer.endObject()
    }

    static func write(value: Any, to writer: inout JSONWriter) {
        switch value {
        case let text as String: writer.string(text)
        case let flag as Bool: writer.bool(flag)
        case let number as Double: writer.number(text: text(number))
        case let number as Float: writer.number(text: text(Double(number)))
        case let number as any BinaryInteger: writer.integer(number)
        case let nested as [String: any Sendable]: write(nested, to: &writer)
        case let items as [Any]:
            writer.beginArray()
            for item in items { write(value: item, to: &writer) }
            writer.endArray()
        case let optional as any OptionalJSONValue:
            if let wrapped = optional.wrappedJSONValue { write(value: wrapped, to: &writer) } else { writer.null() }
        default:
            // NSNull, and anything without a JSON form.
            writer.null()
        }
    }

    /// A finite Double as JSON: integral values without a fraction (`5`, as JSONSerialization wrote
    /// them), others in Swift's shortest round-tripping form; NaN and infinities as null.
    static func text(_ value: Double) -> String {
        guard value.isFinite else { return "" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}

/// Lets `JSONLine` see through an Optional stored in an `any Sendable` (nil is written as null).
protocol OptionalJSONValue {
    var wrappedJSONValue: Any? { get }
}

extension Optional: OptionalJSONValue {
    var wrappedJSONValue: Any? { self.map { $0 } }
}
