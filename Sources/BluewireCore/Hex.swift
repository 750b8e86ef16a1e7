/// Hexadecimal formatting and parsing, without Foundation.

@usableFromInline
let lowerHexDigits: [Character] = Array("0123456789abcdef")
@usableFromInline
let upperHexDigits: [Character] = Array("0123456789ABCDEF")

/// Lower-case hex of `value` with no prefix and no padding beyond one digit.
public func hex<T: BinaryInteger>(_ value: T) -> String {
    var v = UInt64(truncatingIfNeeded: value)
    if v == 0 { return "0" }
    var digits: [Character] = []
    while v > 0 {
        digits.append(lowerHexDigits[Int(v & 0xF)])
        v >>= 4
    }
    return String(digits.reversed())
}

/// Lower-case hex of `value` zero-padded to `width` digits.
public func hex<T: BinaryInteger>(_ value: T, width: Int) -> String {
    let s = hex(value)
    return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
}

/// Two upper-case hex digits.
public func hexByteUpper(_ byte: UInt8) -> String {
    String([upperHexDigits[Int(byte >> 4)], upperHexDigits[Int(byte & 0xF)]])
}

/// Lower-case hex of a byte sequence, two digits per byte, optionally separated.
public func hexString<C: Sequence>(_ bytes: C, separator: String = "") -> String where C.Element == UInt8 {
    var out = ""
    var first = true
    for byte in bytes {
        if !first && !separator.isEmpty { out += separator }
        first = false
        out.append(lowerHexDigits[Int(byte >> 4)])
        out.append(lowerHexDigits[Int(byte & 0xF)])
    }
    return out
}

/// Parses hex text into bytes. Accepts an optional `0x` prefix and ignores spaces, `:` and `-`.
/// Returns nil for an odd number of digits or a non-hex character.
public func parseHex(_ text: String) -> [UInt8]? {
    var digits: [UInt8] = []
    var body = Substring(text)
    if body.hasPrefix("0x") || body.hasPrefix("0X") { body = body.dropFirst(2) }
    for scalar in body.unicodeScalars {
        let v = scalar.value
        switch v {
        case 0x30...0x39: digits.append(UInt8(v - 0x30))
        case 0x41...0x46: digits.append(UInt8(v - 0x41 + 10))
        case 0x61...0x66: digits.append(UInt8(v - 0x61 + 10))
        case 0x20, 0x3A, 0x2D: continue
        default: return nil
        }
    }
    guard digits.count % 2 == 0 else { return nil }
    var out: [UInt8] = []
    out.reserveCapacity(digits.count / 2)
    var i = 0
    while i < digits.count {
        out.append(digits[i] << 4 | digits[i + 1])
        i += 2
    }
    return out
}
