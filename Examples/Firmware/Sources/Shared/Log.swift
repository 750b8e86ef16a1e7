import BluewireCore

/// One line for the log UART, built from static text, integers and octets straight into bytes.
/// String interpolation would link String's Unicode machinery (UTF-8 validation, UTF-16 index
/// breadcrumbs, integer descriptions), about 20 KB of flash the firmware does not need: a
/// `LogLine` literal such as `"mtu \(mtu) on handle \(handle)"` only copies ASCII.
struct LogLine: ExpressibleByStringInterpolation {
    var bytes: [UInt8]

    init(stringLiteral literal: StaticString) {
        var interpolation = Interpolation(literalCapacity: 0, interpolationCount: 0)
        interpolation.appendLiteral(literal)
        bytes = interpolation.bytes
    }

    init(stringInterpolation: Interpolation) { bytes = stringInterpolation.bytes }

    struct Interpolation: StringInterpolationProtocol {
        var bytes: [UInt8] = []

        init(literalCapacity: Int, interpolationCount: Int) {
            bytes.reserveCapacity(literalCapacity + 4 * interpolationCount)
        }

        mutating func appendLiteral(_ literal: StaticString) {
            literal.withUTF8Buffer { bytes.append(contentsOf: $0) }
        }

        mutating func appendInterpolation(_ text: StaticString) { appendLiteral(text) }

        /// Text the engine hands over as a String (a device name, a UUID's description).
        mutating func appendInterpolation(_ text: String) { bytes.append(contentsOf: text.utf8) }

        /// Decimal, with a minus sign when negative.
        mutating func appendInterpolation<Integer: FixedWidthInteger>(_ value: Integer) {
            appendDecimal(Int64(value))
        }

        /// Decimal with at least `width` digits, zero padded.
        mutating func appendInterpolation<Integer: FixedWidthInteger>(_ value: Integer, width: Int) {
            appendDecimal(Int64(value), width: width)
        }

        /// Octets as lowercase hex without separators.
        mutating func appendInterpolation<Octets: Collection<UInt8>>(hex octets: Octets) {
            for octet in octets {
                bytes.append(hexDigit(octet >> 4))
                bytes.append(hexDigit(octet & 0x0F))
            }
        }

        /// `AA:BB:CC:DD:EE:FF`, followed by `/random` for random addresses (as `BluetoothAddress.description`).
        mutating func appendInterpolation(_ address: BluetoothAddress) {
            for index in (0..<6).reversed() {
                let octet = UInt8(truncatingIfNeeded: address.value >> (8 * UInt64(index)))
                bytes.append(hexDigit(octet >> 4, uppercase: true))
                bytes.append(hexDigit(octet & 0x0F, uppercase: true))
                if index > 0 { bytes.append(UInt8(ascii: ":")) }
            }
            if address.type.isRandom { appendLiteral("/random") }
        }

        /// `0x180D` for a 16-bit alias, `0x0000FE95` for a 32-bit one, else the 36-character form, as
        /// `BluetoothUUID.shortString` (without `description`'s assigned name: that table is a
        /// Dictionary of Strings, and `description` joins Strings, about 7 KB of the central's flash).
        mutating func appendInterpolation(_ uuid: BluetoothUUID) {
            if let short = uuid.uint16 {
                appendLiteral("0x")
                appendHex(UInt64(short), digits: 4)
            } else if let mid = uuid.uint32 {
                appendLiteral("0x")
                appendHex(UInt64(mid), digits: 8)
            } else {
                appendHex(uuid.high >> 32, digits: 8)
                bytes.append(UInt8(ascii: "-"))
                appendHex(uuid.high >> 16, digits: 4)
                bytes.append(UInt8(ascii: "-"))
                appendHex(uuid.high, digits: 4)
                bytes.append(UInt8(ascii: "-"))
                appendHex(uuid.low >> 48, digits: 4)
                bytes.append(UInt8(ascii: "-"))
                appendHex(uuid.low, digits: 12)
            }
        }

        /// The low `digits` nibbles of `value`, uppercase.
        private mutating func appendHex(_ value: UInt64, digits: Int) {
            var shift = 4 * (digits - 1)
            while shift >= 0 {
                bytes.append(hexDigit(UInt8(truncatingIfNeeded: value >> UInt64(shift)) & 0x0F, uppercase: true))
                shift -= 4
            }
        }

        private mutating func appendDecimal(_ value: Int64, width: Int = 1) {
            if value < 0 { bytes.append(UInt8(ascii: "-")) }
            var magnitude = value.magnitude
            var digits: [UInt8] = []
            repeat {
                digits.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
                magnitude /= 10
            } while magnitude > 0
            while digits.count < width { digits.append(UInt8(ascii: "0")) }
            bytes.append(contentsOf: digits.reversed())
        }

        private func hexDigit(_ nibble: UInt8, uppercase: Bool = false) -> UInt8 {
            nibble < 10 ? UInt8(ascii: "0") + nibble : (uppercase ? UInt8(ascii: "A") : UInt8(ascii: "a")) + nibble - 10
        }
    }
}

/// Lines on the log UART, each prefixed with the time in seconds and milliseconds, ending in CR LF.
func log(_ line: LogLine) {
    let ms = Board.milliseconds
    let stamp: LogLine = "[\(ms / 1000).\(ms % 1000, width: 3)] "
    Board.writeLog(stamp.bytes)
    Board.writeLog(line.bytes)
    Board.writeLog([0x0D, 0x0A])
}

func logHeap(_ context: LogLine) {
    log("heap: peak \(Board.heapPeak) bytes, in use \(Board.heapInUse) bytes, \(Board.heapAllocations) allocations, stack high-water \(Board.stackHighWater) bytes (\(context))")
}

extension LogLine.Interpolation {
    mutating func appendInterpolation(_ line: LogLine) { bytes.append(contentsOf: line.bytes) }
}
