import BluewireCore

/// What the describer says about one capture record: a one-line summary and the same facts as
/// named fields for JSON.
public struct PacketDescription: Sendable {
    /// A field value in the JSON form.
    public enum Value: Sendable, Equatable {
        case string(String)
        case integer(Int64)
        case bool(Bool)
        case strings([String])
    }

    /// The record's index in the capture.
    public var index: Int
    /// Microseconds since the first record (negative if the capture's clock stepped back).
    public var relativeTime: Int64
    /// nil for notes, which did not cross the HCI.
    public var direction: PacketDirection?
    /// "HCI Command", "HCI Event", "ACL", "SCO", "ISO" or "Note".
    public var kind: String
    /// The decoded summary, e.g. `LE Set Scan Enable enable=1 filter_duplicates=0`.
    public var summary: String
    /// The summary's facts as fields, in the order they were found.
    public var fields: [(name: String, value: Value)]
    /// The first decoding problem met in this record, if any (the summary then says what was decoded).
    public var error: DecodeError?
    /// The controller the record belongs to, in Linux monitor captures (btsnoop datalink 2001), where
    /// one file interleaves several controllers; nil in single-controller captures.
    public var controllerIndex: UInt16?
    /// The time column as shown, when not the default seconds since the first record
    /// (see `PacketDescriber.timeFormat`).
    public var timeText: String?
    /// The record's timestamp in Unix microseconds, when the describer was told the capture format.
    public var unixTime: Int64?
    /// Microseconds since the previous record.
    public var deltaTime: Int64 = 0

    public init(index: Int, relativeTime: Int64, direction: PacketDirection?, kind: String) {
        self.index = index
        self.relativeTime = relativeTime
        self.direction = direction
        self.kind = kind
        self.summary = ""
        self.fields = []
        self.error = nil
    }

    /// Adds to the summary text, separated by a space.
    public mutating func say(_ text: String) {
        if !summary.isEmpty { summary.append(" ") }
        summary.append(text)
    }

    /// Adds `name=value` to the summary, appended in place (no temporary strings).
    mutating func show(_ name: String, _ value: String) {
        if !summary.isEmpty { summary.append(" ") }
        summary.append(name)
        summary.append("=")
        summary.append(value)
    }

    /// Whether `name` is one of the JSON line's own keys, which a field must not repeat (checked by
    /// length first: this runs for every field of every JSON line).
    static func isReserved(_ name: String) -> Bool {
        switch name.utf8.count {
        case 4: return name == "kind"
        case 5: return name == "index" || name == "error"
        case 7: return name == "time_us" || name == "summary"
        case 8: return name == "delta_us"
        case 9: return name == "direction"
        case 12: return name == "unix_time_us"
        case 16: return name == "controller_index"
        default: return false
        }
    }

    /// Adds a field and shows it in the summary as `name=value`.
    public mutating func add(_ name: String, _ value: Value, shown: Bool = true) {
        // JSON objects need unique keys: a repeated field (two manufacturer data structures, say)
        // gets a numbered name.
        var key = name
        var n = 2
        while fields.contains(where: { $0.name == key }) {
            key = name + "_" + String(n)
            n += 1
        }
        fields.append((key, value))
        guard shown else { return }
        switch value {
        case .string(let text): show(name, text)
        case .integer(let number): show(name, String(number))
        case .bool(let flag): show(name, flag ? "yes" : "no")
        case .strings(let list): show(name, list.joined(separator: ","))
        }
    }

    public mutating func add(_ name: String, _ text: String, shown: Bool = true) {
        add(name, .string(text), shown: shown)
    }

    public mutating func add<T: BinaryInteger>(_ name: String, _ number: T, shown: Bool = true) {
        add(name, .integer(Int64(truncatingIfNeeded: number)), shown: shown)
    }

    /// Adds a hexadecimal field (`0x002a`, lower case, `digits` wide).
    public mutating func addHex<T: BinaryInteger>(_ name: String, _ number: T, digits: Int = 4, shown: Bool = true) {
        var text = "0x"
        text.append(hex(number, width: digits))
        add(name, .string(text), shown: shown)
    }

    /// Records a decoding problem; the first one is kept.
    public mutating func fail(_ problem: DecodeError) {
        if error == nil { error = problem }
        say("[" + problem.description + "]")
    }

    /// The btmon-like line: index, seconds since the first record, direction, kind and summary.
    public var line: String {
        let arrow: String
        switch direction {
        case .hostToController?: arrow = "<"
        case .controllerToHost?: arrow = ">"
        case nil: arrow = "="
        }
        let number = String(index)
        var line = "#"
        line.reserveCapacity(24 + kind.utf8.count + summary.utf8.count)
        line.append(number)
        for _ in 0..<max(1, 7 - number.utf8.count) { line.append(" ") }
        line.append(timeText ?? PacketDescription.seconds(relativeTime))
        line.append(" ")
        if let controllerIndex {
            line.append("[hci")
            line.append(String(controllerIndex))
            line.append("] ")
        }
        line.append(arrow)
        line.append(" ")
        line.append(kind)
        line.append(": ")
        line.append(summary)
        return line
    }

    /// `12.345678`: seconds with six decimals.
    static func seconds(_ microseconds: Int64) -> String {
        let sign = microseconds < 0 ? "-" : ""
        let magnitude = microseconds.magnitude
        let fraction = String(magnitude % 1_000_000)
        return sign + String(magnitude / 1_000_000) + "."
            + String(repeating: "0", count: 6 - fraction.count) + fraction
    }

    /// The description as one JSON object (no newline); `appendJSON(to:)` builds it.
    public var json: String {
        var bytes: [UInt8] = []
        appendJSON(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// btmon's `-v`-like tree: the line, then every field on its own indented line (list items one
    /// per line below their field).
    public var tree: String {
        var text = line
        for (name, value) in fields {
            text.append("\n        ")
            text.append(name)
            text.append(": ")
            switch value {
            case .string(let string): text.append(PacketDescription.needsQuoting(string) ? JSONWriter.quoted(string) : string)
            case .integer(let number): text.append(String(number))
            case .bool(let flag): text.append(flag ? "yes" : "no")
            case .strings(let list):
                text.append(String(list.count))
                for item in list {
                    text.append("\n            ")
                    text.append(PacketDescription.needsQuoting(item) ? JSONWriter.quoted(item) : item)
                }
            }
        }
        if let error {
            text.append("\n        error: ")
            text.append(error.description)
        }
        return text
    }

    /// Whether free text holds control characters, which the tree shows escaped and quoted.
    static func needsQuoting(_ text: String) -> Bool {
        text.utf8.contains { $0 < 0x20 || $0 == 0x7F }
    }
}
