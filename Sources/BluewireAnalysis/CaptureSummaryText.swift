import BluewireATT
import BluewireCore
import BluewireSnoop

extension CaptureSummary {
    /// The summary as a table for people: one count per line, histogram entries named
    /// (LE subevents, ATT opcodes), and where and why the capture ends early if it does.
    public func table(truncated: CaptureError? = nil) -> String {
        var text = ""
        for (key, value) in fields {
            switch value {
            case .count(let count):
                text.append(CaptureSummary.row(key, count, indent: 0))
            case .histogram(let buckets):
                text.append(key)
                text.append(buckets.isEmpty ? " (none)\n" : "\n")
                for bucket in buckets {
                    text.append(CaptureSummary.row(bucket.key + " " + CaptureSummary.label(key, bucket.key),
                                                   bucket.count, indent: 2))
                }
            }
        }
        if let truncated {
            text.append("truncated: ")
            text.append(truncated.description)
            text.append("\n")
        }
        return text
    }

    static func row(_ label: String, _ count: Int, indent: Int) -> String {
        let number = String(count)
        let width = max(1, 52 - indent - label.utf8.count - number.utf8.count)
        return String(repeating: " ", count: indent) + label + String(repeating: " ", count: width) + number + "\n"
    }

    /// The name of a histogram entry ("0x0d" in `le_meta_subevent_hist` is LE Extended Advertising Report).
    static func label(_ histogram: String, _ key: String) -> String {
        guard let value = UInt8(key.dropFirst(2), radix: 16) else { return "" }
        if histogram == "att_opcode_hist" { return ATTOpcode(value).description }
        let name = EventTable.describe(subevent: value)
        return String(name.prefix(while: { $0 != "(" }).dropLast())
    }

    /// The summary as one JSON object like `json`, with a `truncated` object (record index, byte
    /// offset, reason) when the capture ends inside a record.
    public func json(truncated: CaptureError?) -> String {
        guard let truncated else { return json }
        var writer = JSONWriter()
        writer.beginObject()
        for (key, value) in fields {
            writer.key(key)
            switch value {
            case .count(let count):
                writer.integer(count)
            case .histogram(let buckets):
                writer.beginObject()
                for bucket in buckets { writer.field(bucket.key, bucket.count) }
                writer.endObject()
            }
        }
        writer.key("truncated")
        writer.beginObject()
        writer.field("record_index", truncated.recordIndex)
        writer.field("offset", truncated.offset)
        writer.field("reason", truncated.description)
        writer.endObject()
        writer.endObject()
        return writer.text
    }
}
