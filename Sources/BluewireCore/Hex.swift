/// Hexadecimal formatting and parsing, without Foundation.

// Formatting writes ASCII straight into the string's storage (one allocation, none for strings of
// up to 15 octets): the packet describers call these for every field of every packet.

/// The ASCII code of hex digit `nibble` (0...15), lower or upper case.
@inlinable @inline(__always)
func hexDigit(_ nibble: UInt8, upper: Bool = false) -> UInt8 {
    nibble < 10 ? 0x30 + nibble : (upper ? 0x37 : 0x57) + nibble
}

/// Lower-case hex of `value` with no prefix and no padding beyond one digit.
public func hex<T: BinaryInteger>(_ value: T) -> String {
    hex(value, width: 1)
}

/// Lower-case hex of `value` zero-padded to `width` digits.
public func hex<T: BinaryInteger>(_ value: T, width: Int) -> String {
    let v = UInt64(truncatingIfNeeded: value)
    let digits = Swift.max((64 - v.leadingZeroBitCount + 3) / 4, width, 1)
    return String(unsafeUninitializedCapacity: digits) { buffer in
        var rest = v
        var i = digits
        while i > 0 {
            i -= 1
            buffer[i] = hexDigit(UInt8(truncatingIfNeeded: rest & 0xF))
            rest >>= 4
        }
        return digits
    }
}

/// Upper-case hex of `value` zero-padded to `width` digits, written as ASCII: no `uppercased()`,
/// whose Unicode case mappings (about 15 KB of tables) an Embedded Swift image would link.
func upperHex(_ value: UInt64, width: Int) -> String {
    let digits = Swift.max((64 - value.leadingZeroBitCount + 3) / 4, width, 1)
    return String(unsafeUninitializedCapacity: digits) { buffer in
        var rest = value
        var i = digits
        while i > 0 {
            i -= 1
            buffer[i] = hexDigit(UInt8(truncatingIfNeeded: rest & 0xF), upper: true)
            rest >>= 4
        }
        return digits
    }
}

/// Two upper-case hex digits.
public func hexByteUpper(_ byte: UInt8) -> String {
    String(unsafeUninitializedCapacity: 2) { buffer in
        buffer[0] = hexDigit(byte >> 4, upper: true)
        buffer[1] = hexDigit(byte & 0xF, upper: true)
        return 2
    }
}

/// Lower-case hex of a byte sequence, two digits per byte, optionally separated.
@inlinable
public func hexString<C: Sequence>(_ bytes: C, separator: String = "") -> String where C.Element == UInt8 {
    hexString(Array(bytes), separator: separator)
}

/// Lower-case hex of a byte collection, two digits per byte, optionally separated. Contiguous bytes
/// (arrays and their slices) are read through a buffer pointer: iterating a collection through its
/// generic witness costs an allocation per element.
@inlinable
public func hexString<C: Collection>(_ bytes: C, separator: String = "") -> String where C.Element == UInt8 {
    if let text = bytes.withContiguousStorageIfAvailable({ hexString(buffer: $0, separator: separator) }) {
        return text
    }
    return Array(bytes).withUnsafeBufferPointer { hexString(buffer: $0, separator: separator) }
}

@usableFromInline
func hexString(buffer bytes: UnsafeBufferPointer<UInt8>, separator: String) -> String {
    let count = bytes.count
    guard count > 0 else { return "" }
    var separatorUTF8 = separator
    return separatorUTF8.withUTF8 { separatorBytes in
        let length = count * 2 + (count - 1) * separatorBytes.count
        return String(unsafeUninitializedCapacity: length) { buffer in
            var i = 0
            for byte in bytes {
                if i > 0 {
                    for s in separatorBytes {
                        buffer[i] = s
                        i += 1
                    }
                }
                buffer[i] = hexDigit(byte >> 4)
                buffer[i + 1] = hexDigit(byte & 0xF)
                i += 2
            }
            return i
        }
    }
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
