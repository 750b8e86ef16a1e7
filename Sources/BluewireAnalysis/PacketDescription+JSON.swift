import BluewireCore

extension PacketDescription {
    /// The description as one JSON object (no newline), appended to UTF-8 bytes.
    ///
    /// `decode --json` writes hundreds of thousands of these: built as bytes straight into the
    /// output buffer, not as a `String` grown append by append (which made a JSON line cost about
    /// twice its text line). The escapes are `JSONWriter`'s.
    public func appendJSON(to out: inout [UInt8]) {
        out.reserveCapacity(out.count + 160 + 2 * summary.utf8.count)
        JSONWriter.appendASCII("{\"index\":", to: &out)
        PacketDescription.appendDecimal(Int64(index), to: &out)
        JSONWriter.appendASCII(",\"time_us\":", to: &out)
        PacketDescription.appendDecimal(relativeTime, to: &out)
        JSONWriter.appendASCII(",\"delta_us\":", to: &out)
        PacketDescription.appendDecimal(deltaTime, to: &out)
        if let unixTime {
            JSONWriter.appendASCII(",\"unix_time_us\":", to: &out)
            PacketDescription.appendDecimal(unixTime, to: &out)
        }
        if let controllerIndex {
            JSONWriter.appendASCII(",\"controller_index\":", to: &out)
            PacketDescription.appendDecimal(Int64(controllerIndex), to: &out)
        }
        switch direction {
        case .hostToController?: JSONWriter.appendASCII(",\"direction\":\"host_to_controller\"", to: &out)
        case .controllerToHost?: JSONWriter.appendASCII(",\"direction\":\"controller_to_host\"", to: &out)
        case nil: JSONWriter.appendASCII(",\"direction\":null", to: &out)
        }
        JSONWriter.appendASCII(",\"kind\":", to: &out)
        PacketDescription.appendQuoted(kind, to: &out)
        JSONWriter.appendASCII(",\"summary\":", to: &out)
        PacketDescription.appendQuoted(summary, to: &out)
        for (name, value) in fields {
            out.append(UInt8(ascii: ","))
            // A field never repeats one of the line's own keys (strict JSON has no duplicate keys).
            if PacketDescription.isReserved(name) {
                PacketDescription.appendQuoted("field_" + name, to: &out)
            } else {
                PacketDescription.appendQuoted(name, to: &out)
            }
            out.append(UInt8(ascii: ":"))
            switch value {
            case .string(let text): PacketDescription.appendQuoted(text, to: &out)
            case .integer(let number): PacketDescription.appendDecimal(number, to: &out)
            case .bool(let flag): flag ? JSONWriter.appendASCII("true", to: &out) : JSONWriter.appendASCII("false", to: &out)
            case .strings(let list):
                out.append(UInt8(ascii: "["))
                for (position, item) in list.enumerated() {
                    if position > 0 { out.append(UInt8(ascii: ",")) }
                    PacketDescription.appendQuoted(item, to: &out)
                }
                out.append(UInt8(ascii: "]"))
            }
        }
        if let error {
            JSONWriter.appendASCII(",\"error\":", to: &out)
            PacketDescription.appendQuoted(error.description, to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// `JSONWriter.appendQuoted`, with the common case (nothing to escape) copied in one piece.
    static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        let copied: Bool? = text.utf8.withContiguousStorageIfAvailable { bytes in
            for byte in bytes where byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F { return false }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: bytes)
            out.append(UInt8(ascii: "\""))
            return true
        }
        if copied != true { JSONWriter.appendQuoted(text, to: &out) }
    }

    /// A decimal integer as ASCII digits, without a temporary `String`.
    static func appendDecimal(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 20 digits at most, on the stack
        withUnsafeMutableBytes(of: &digits) { buffer in
            var position = buffer.count
            repeat {
                position -= 1
                buffer[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(contentsOf: buffer[position...])
        }
    }
}
