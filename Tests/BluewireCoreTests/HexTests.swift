import BluewireCore
import Testing

/// The hex formatters write ASCII straight into the string's storage: every width, sign and
/// separator case must still produce exactly what the describers and the CLI print.
@Suite("Hex formatting")
struct HexTests {
    @Test("hex(value) has no padding beyond one digit; negative values are their two's complement")
    func unpadded() {
        #expect(hex(0) == "0")
        #expect(hex(UInt8(0x0A)) == "a")
        #expect(hex(0x2A) == "2a")
        #expect(hex(UInt16(0x1234)) == "1234")
        #expect(hex(UInt64.max) == "ffffffffffffffff")
        #expect(hex(Int8(-1)) == "ffffffffffffffff", "sign-extended to 64 bits, as UInt64(truncatingIfNeeded:) does")
    }

    @Test("hex(value, width:) pads to the width and never truncates")
    func padded() {
        #expect(hex(0, width: 4) == "0000")
        #expect(hex(0x2A, width: 4) == "002a")
        #expect(hex(0x12345, width: 4) == "12345")
        #expect(hex(0xBEEF, width: 0) == "beef")
        #expect(hex(1, width: 20) == "00000000000000000001")
    }

    @Test("hexString: two lower-case digits per byte, separator between bytes only")
    func bytes() {
        #expect(hexString([UInt8]()) == "")
        #expect(hexString([UInt8]([0x00, 0x0F, 0xF0, 0xFF])) == "000ff0ff")
        #expect(hexString([UInt8]([0x01, 0xAB]), separator: " ") == "01 ab")
        #expect(hexString([UInt8]([0x01, 0xAB, 0x7F]), separator: ", ") == "01, ab, 7f")
        #expect(hexString([UInt8]([0x01, 0x02, 0x03])[1...]) == "0203", "a slice starts at its own index")
        #expect(hexString(AnySequence([UInt8]([0xCA, 0xFE])), separator: ":") == "ca:fe", "a plain sequence")
        let long = [UInt8](0...255)
        #expect(hexString(long).utf8.count == 512)
        #expect(parseHex(hexString(long, separator: "-")) == long, "round trip through the parser")
    }

    @Test("hexByteUpper: two upper-case digits")
    func upper() {
        #expect(hexByteUpper(0x00) == "00")
        #expect(hexByteUpper(0x0A) == "0A")
        #expect(hexByteUpper(0xFF) == "FF")
    }
}
