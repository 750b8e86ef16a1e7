import BluewireCore
import Testing
@testable import BluewireGATT

@Suite struct GATTDatabaseJSONParserTests {
    @Test func parsesEveryKindWithOffsets() throws {
        let value = try JSONParser.parse(#"{"a": [1, -2.5e3, true, false, null], "b": {"c": "d"}}"#)
        let a = try #require(value["a"]?.arrayElements)
        #expect(a.count == 5)
        #expect(a[0].integerValue == 1)
        #expect(a[1].kind == .number(JSONNumber(validatedText: "-2.5e3", integer: nil)))
        #expect(a[2].boolValue == true)
        #expect(a[3].boolValue == false)
        #expect(a[4].kind == .null)
        #expect(value["b"]?["c"]?.stringValue == "d")
        #expect(value["b"]?.offset == 43)
        #expect(a[1].offset == 10)
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        let value = try JSONParser.parse(#""q\"b\\s\/n\nt\tu\u00e9\ud83d\ude00""#)
        #expect(value.stringValue == "q\"b\\s/n\nt\tu\u{e9}\u{1F600}")
        let raw = try JSONParser.parse("\"h\u{e9}llo \u{1F600}\"")
        #expect(raw.stringValue == "h\u{e9}llo \u{1F600}")
    }

    @Test func integersBeyondInt64KeepTheirTextOnly() throws {
        let value = try JSONParser.parse("[9223372036854775807, -9223372036854775808, 9223372036854775808]")
        let items = try #require(value.arrayElements)
        #expect(items[0].integerValue == Int64.max)
        #expect(items[1].integerValue == Int64.min)
        #expect(items[2].integerValue == nil)
        #expect(items[2].kind == .number(JSONNumber(validatedText: "9223372036854775808", integer: nil)))
    }

    func failure(_ text: String) -> JSONParseError? {
        do {
            _ = try JSONParser.parse(text)
            return nil
        } catch {
            return error
        }
    }

    func failure(bytes: [UInt8]) -> JSONParseError? {
        do {
            _ = try JSONParser.parse(bytes[...])
            return nil
        } catch {
            return error
        }
    }

    @Test func syntaxErrorsNameLineAndColumn() {
        #expect(failure("{\n  \"a\": [1, 2,]\n}") == JSONParseError(.unexpectedCharacter(UInt8(ascii: "]")), offset: 15, line: 2, column: 14))
        #expect(failure("{\"a\" 1}") == JSONParseError(.unexpectedCharacter(UInt8(ascii: "1")), offset: 5, line: 1, column: 6))
        #expect(failure("[01]") == JSONParseError(.invalidNumber, offset: 2, line: 1, column: 3))
        #expect(failure("[1.]") == JSONParseError(.invalidNumber, offset: 3, line: 1, column: 4))
        #expect(failure("-") == JSONParseError(.unexpectedEnd, offset: 1, line: 1, column: 2))
        #expect(failure("\"abc") == JSONParseError(.unexpectedEnd, offset: 4, line: 1, column: 5))
        #expect(failure("\"a\nb\"") == JSONParseError(.controlCharacterInString, offset: 2, line: 1, column: 3))
        #expect(failure(#""\x""#) == JSONParseError(.invalidEscape, offset: 1, line: 1, column: 2))
        #expect(failure(#""\ud800x""#) == JSONParseError(.invalidUnicodeEscape, offset: 1, line: 1, column: 2))
        #expect(failure(#""\udc00""#) == JSONParseError(.invalidUnicodeEscape, offset: 1, line: 1, column: 2))
        #expect(failure(#"{"k": 1, "k": 2}"#) == JSONParseError(.duplicateKey("k"), offset: 9, line: 1, column: 10))
        #expect(failure("{} {}") == JSONParseError(.trailingContent, offset: 3, line: 1, column: 4))
        #expect(failure("") == JSONParseError(.unexpectedEnd, offset: 0, line: 1, column: 1))
        #expect(failure("tru") == JSONParseError(.unexpectedEnd, offset: 3, line: 1, column: 4))
        #expect(failure("nul!") == JSONParseError(.unexpectedCharacter(UInt8(ascii: "!")), offset: 3, line: 1, column: 4))
        #expect(failure("// no\n{}") == JSONParseError(.unexpectedCharacter(UInt8(ascii: "/")), offset: 0, line: 1, column: 1))
    }

    @Test func malformedUTF8IsRefused() {
        // Overlong "/" (C0 AF), a lone continuation byte, an encoded surrogate (ED A0 80), a truncated sequence.
        for bad: [UInt8] in [[0xC0, 0xAF], [0x80], [0xED, 0xA0, 0x80], [0xE2, 0x82]] {
            let text: [UInt8] = [0x22] + bad + [0x22]
            #expect(failure(bytes: text) == JSONParseError(.invalidUTF8, offset: 1, line: 1, column: 2))
        }
    }

    @Test func nestingIsBounded() {
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(failure(deep)?.reason == .nestingTooDeep(limit: 64))
        let fine = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(failure(fine) == nil)
    }

    @Test func writerEscapesAndRoundTrips() throws {
        let value = JSONValue.object([
            JSONMember("s", .string("a\"b\\c\n\u{01}\u{e9}")),
            JSONMember("n", .integer(-12)),
            JSONMember("l", .array([.bool(true), .null, .array([])])),
            JSONMember("o", .object([])),
        ])
        let compact = JSONWriter.serialize(value)
        #expect(compact == #"{"s":"a\"b\\c\n\u0001é","n":-12,"l":[true,null,[]],"o":{}}"#)
        #expect(JSONWriter.serialize(value, style: .spaced) == #"{ "s": "a\"b\\c\n\u0001é", "n": -12, "l": [true, null, []], "o": {} }"#)
        #expect(try JSONParser.parse(compact) == value)
    }
}
