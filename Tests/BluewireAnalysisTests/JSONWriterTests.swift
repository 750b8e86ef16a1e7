import BluewireAnalysis
import BluewireCore
import Foundation
import Testing

@Suite struct JSONWriterTests {
    @Test func stringsAreEscapedPerRFC8259() throws {
        let nasty = "quote\" backslash\\ newline\n tab\t nul\u{0} bell\u{7} del\u{7F} é 😀"
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("name", nasty)
        writer.field("n", -5)
        writer.key("list")
        writer.beginArray()
        writer.string("a")
        writer.bool(true)
        writer.null()
        writer.endArray()
        writer.key("empty")
        writer.beginObject()
        writer.endObject()
        writer.endObject()
        #expect(!writer.text.contains("\n"), "a JSON line must stay one line")
        let parsed = try #require(
            try JSONSerialization.jsonObject(with: Data(writer.text.utf8)) as? [String: Any], "\(writer.text)")
        #expect(parsed["name"] as? String == nasty)
        #expect(parsed["n"] as? Int == -5)
        #expect((parsed["list"] as? [Any])?.count == 3)
        #expect((parsed["empty"] as? [String: Any])?.isEmpty == true)
    }

    @Test func quotedEscapesControlCharactersAsUnicode() {
        #expect(JSONWriter.quoted("a\u{1}b") == "\"a\\u0001b\"")
        #expect(JSONWriter.quoted("\"") == "\"\\\"\"")
    }
}
