import BluewireAnalysis
import BluewireCore
import Foundation
import Testing

/// `PacketDescription.appendJSON(to:)`: the JSON line `decode --json` writes straight into its output
/// bytes, with the same keys, escapes and numbers as `JSONWriter`.
@Suite struct PacketDescriptionJSONTests {
    static func description() -> PacketDescription {
        var d = PacketDescription(index: 12, relativeTime: -3, direction: nil, kind: "ACL")
        d.deltaTime = Int64.min
        d.unixTime = Int64.max
        d.controllerIndex = 65535
        d.add("name", "quote\" backslash\\ newline\n nul\u{0} del\u{7F} é 😀")
        d.add("index", 7)  // one of the line's own keys: written as field_index
        d.add("flag", .bool(false))
        d.add("uuids", .strings(["180d", "tab\there", ""]))
        d.add("handle", 0x40)
        d.fail(DecodeError(.truncated(needed: 4, available: 1), layer: "att", field: "handle", offset: 2))
        return d
    }

    @Test func bytesParseToTheDescribedFields() throws {
        let d = Self.description()
        var bytes: [UInt8] = Array("prefix ".utf8)
        d.appendJSON(to: &bytes)
        #expect(Array(bytes.prefix(7)) == Array("prefix ".utf8), "appends, keeps what the buffer held")
        let line = Array(bytes.dropFirst(7))
        #expect(!line.contains(UInt8(ascii: "\n")), "a JSON line must stay one line")
        #expect(String(decoding: line, as: UTF8.self) == d.json)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                                  "\(String(decoding: line, as: UTF8.self))")
        #expect(object["index"] as? Int == 12)
        #expect(object["time_us"] as? Int == -3)
        #expect((object["delta_us"] as? NSNumber)?.int64Value == Int64.min)
        #expect((object["unix_time_us"] as? NSNumber)?.int64Value == Int64.max)
        #expect(object["controller_index"] as? Int == 65535)
        #expect(object["direction"] is NSNull)
        #expect(object["kind"] as? String == "ACL")
        #expect(object["summary"] as? String == d.summary)
        #expect(object["name"] as? String == "quote\" backslash\\ newline\n nul\u{0} del\u{7F} é 😀")
        #expect(object["field_index"] as? Int == 7)
        #expect(object["flag"] as? Bool == false)
        #expect(object["uuids"] as? [String] == ["180d", "tab\there", ""])
        #expect(object["handle"] as? Int == 0x40)
        #expect(object["error"] as? String == d.error?.description)
        #expect(object.count == 14)
    }

    @Test func decimalsMatchSwiftsFormatting() {
        for value: Int64 in [0, 7, -7, 10, 99, 100, -100, 1_000_000, Int64.max, Int64.min] {
            var d = PacketDescription(index: 0, relativeTime: value, direction: .hostToController, kind: "Note")
            d.add("n", value)
            #expect(d.json.contains("\"time_us\":\(value),"), "\(d.json)")
            #expect(d.json.contains("\"n\":\(value)}"), "\(d.json)")
        }
    }
}
