import BluewireCore
import BluewireHCI

/// How one parameter of an HCI command, event or return block is laid out and shown
/// (Core Vol 4 Part E §7: every parameter is little-endian, of the size the spec gives).
enum ParameterKind: Sendable {
    /// Unsigned integers shown in decimal.
    case uint8, uint16, uint24, uint32
    /// Signed integers (dBm and the like) shown in decimal.
    case int8, int16
    /// Unsigned integers shown in hexadecimal (masks, bit fields, identifiers).
    case hex8, hex16, hex24, hex32, hex64
    /// A 12-bit connection handle in two octets.
    case handle
    /// An HCI error code (Core Vol 1 Part F §1.3) with its name.
    case status
    /// A 6-octet BD_ADDR.
    case address
    /// An LE address type (0 public, 1 random, 2/3 identity).
    case addressType
    /// 0x00 central, 0x01 peripheral (LE), or central/peripheral of a BR/EDR link.
    case role
    /// 0x00 no, anything else yes.
    case bool
    /// A command opcode (in Command Complete/Status) with its name.
    case opcode
    /// Fixed-size octets shown as hex (keys, channel maps, feature pages).
    case bytes(Int)
    /// The rest of the block as hex.
    case remaining
    /// UTF-8 text in a fixed-size field, up to the first NUL (Local_Name: 248 octets), shown quoted.
    case text(Int)
    /// One octet of length, then that many octets as hex.
    case lengthPrefixed
    /// Advertising or EIR data (Core Supplement Part A): with a one-octet length first, or the rest.
    case advertisingData(lengthPrefixed: Bool)
    /// One octet of count, then that many groups (fields numbered `_0`, `_1`, ... when several).
    case list([Parameter])
    /// One group per bit set in the previous octet (the PHY-indexed arrays of extended scanning).
    case perPHY([Parameter])
    /// Groups repeated to the end of the block (the CID lists of L2CAP credit-based signaling).
    case repeated([Parameter])
}

/// One named parameter.
struct Parameter: Sendable {
    let name: StaticString
    let kind: ParameterKind

    init(_ name: StaticString, _ kind: ParameterKind) {
        self.name = name
        self.kind = kind
    }

    static func u8(_ name: StaticString) -> Parameter { Parameter(name, .uint8) }
    static func u16(_ name: StaticString) -> Parameter { Parameter(name, .uint16) }
    static func u24(_ name: StaticString) -> Parameter { Parameter(name, .uint24) }
    static func u32(_ name: StaticString) -> Parameter { Parameter(name, .uint32) }
    static func i8(_ name: StaticString) -> Parameter { Parameter(name, .int8) }
    static func x8(_ name: StaticString) -> Parameter { Parameter(name, .hex8) }
    static func x16(_ name: StaticString) -> Parameter { Parameter(name, .hex16) }
    static func x24(_ name: StaticString) -> Parameter { Parameter(name, .hex24) }
    static func x32(_ name: StaticString) -> Parameter { Parameter(name, .hex32) }
    static func x64(_ name: StaticString) -> Parameter { Parameter(name, .hex64) }
    static func key(_ name: StaticString, _ size: Int = 16) -> Parameter { Parameter(name, .bytes(size)) }
    static func flag(_ name: StaticString) -> Parameter { Parameter(name, .bool) }
    static func reason(_ name: StaticString = "reason") -> Parameter { Parameter(name, .status) }
    static func addr(_ name: StaticString = "address") -> Parameter { Parameter(name, .address) }
    static func addrType(_ name: StaticString = "address_type") -> Parameter { Parameter(name, .addressType) }
    static func rest(_ name: StaticString = "data") -> Parameter { Parameter(name, .remaining) }
    static func list(_ name: StaticString, _ group: [Parameter]) -> Parameter { Parameter(name, .list(group)) }

    static let status = Parameter("status", .status)
    static let handle = Parameter("handle", .handle)
    static let bdAddr = Parameter("address", .address)
}

/// Decodes a parameter block by its layout into a description, without trapping on short or odd input.
enum ParameterDecoder {
    /// Decodes `layout` from `bytes`. A block that ends early is described as far as it goes and
    /// marked truncated, except after a non-zero status (Core Vol 4 Part E §7.7.14: a failed command
    /// may return only its status). Octets past the layout are shown as `trailing`.
    static func decode(
        _ layout: [Parameter], _ bytes: ArraySlice<UInt8>, into d: inout PacketDescription,
        layer: StaticString = "hci"
    ) {
        var i = bytes.startIndex
        var failedStatus = false
        let ok = decode(layout, bytes, at: &i, suffix: "", failedStatus: &failedStatus, into: &d, layer: layer)
        // Fixed-size fields (advertising data, EIR, names) are padded with zeros; other leftovers are shown.
        if ok && i < bytes.endIndex && bytes[i...].contains(where: { $0 != 0 }) {
            d.add("trailing", hexString(bytes[i...].prefix(64)))
        }
    }

    /// Returns false when the block ended early (the rest is then not decoded).
    static func decode(
        _ layout: [Parameter], _ bytes: ArraySlice<UInt8>, at i: inout Int, suffix: String,
        failedStatus: inout Bool, into d: inout PacketDescription, layer: StaticString
    ) -> Bool {
        var previous: UInt64 = 0
        for parameter in layout {
            let size = fixedSize(parameter.kind)
            let available = bytes.endIndex - i
            if size > available {
                if !(failedStatus && i == bytes.endIndex) {
                    d.fail(DecodeError(.truncated(needed: size, available: available), layer: layer,
                                       field: parameter.name, offset: i - bytes.startIndex))
                }
                return false
            }
            let name = suffix.isEmpty ? parameter.name.asString : parameter.name.asString + suffix
            let value = integer(bytes, i, size)
            switch parameter.kind {
            case .uint8, .uint16, .uint24, .uint32: d.add(name, value)
            case .int8: d.add(name, Int8(truncatingIfNeeded: value))
            case .int16: d.add(name, Int16(truncatingIfNeeded: value))
            case .hex8, .hex16, .hex24, .hex32, .hex64: d.addHex(name, value, digits: size * 2)
            case .handle: d.addHex(name, value & 0x0FFF)
            case .status:
                d.add(name, HCIStatus(UInt8(truncatingIfNeeded: value)).description)
                if parameter.name.asString == "status" && value != 0 { failedStatus = true }
            case .address:
                d.add(name, BluetoothAddress(value: value, type: .public).hexString)
            case .addressType: d.add(name, addressTypeName(value))
            case .role: d.add(name, value == 0 ? "central" : value == 1 ? "peripheral" : "0x" + hex(value, width: 2))
            case .bool: d.add(name, .bool(value != 0))
            case .opcode: d.add(name, CommandTable.describe(opcode: UInt16(truncatingIfNeeded: value)))
            case .bytes(let count): d.add(name, hexString(bytes[i..<(i + count)]))
            case .text(let count):
                let field = bytes[i..<(i + min(count, available))]
                let end = field.firstIndex(of: 0) ?? field.endIndex
                let text = String(decoding: field[field.startIndex..<end], as: UTF8.self)
                d.add(name, text, shown: false)
                d.say(name + "=" + JSONWriter.quoted(text))
                i += field.count
                continue
            case .remaining:
                let rest = bytes[i...]
                if !rest.isEmpty { d.add(name, hexString(rest.prefix(64)) + (rest.count > 64 ? "..." : "")) }
                i = bytes.endIndex
                continue
            case .lengthPrefixed, .advertisingData(true):
                let length = Int(value)
                guard 1 + length <= available else {
                    d.fail(DecodeError(.truncated(needed: 1 + length, available: available), layer: layer,
                                       field: parameter.name, offset: i - bytes.startIndex))
                    return false
                }
                let data = bytes[(i + 1)..<(i + 1 + length)]
                if case .advertisingData = parameter.kind {
                    AdvertisingReportDescription.advertisingData(data, suffix: suffix, into: &d)
                } else {
                    d.add(name, hexString(data))
                }
                i += 1 + length
                continue
            case .advertisingData(false):
                AdvertisingReportDescription.advertisingData(bytes[i...], suffix: suffix, into: &d)
                i = bytes.endIndex
                continue
            case .repeated(let group):
                var n = 0
                while i < bytes.endIndex {
                    guard decode(group, bytes, at: &i, suffix: suffix + "_" + String(n), failedStatus: &failedStatus,
                                 into: &d, layer: layer) else { return false }
                    n += 1
                }
                continue
            case .list(let group), .perPHY(let group):
                var count = Int(value)
                if case .perPHY = parameter.kind {
                    count = (previous & 0xFF).nonzeroBitCount
                } else {
                    d.add(name, count)
                    i += 1
                }
                for n in 0..<count {
                    let inner = count > 1 ? suffix + "_" + String(n) : suffix
                    guard decode(group, bytes, at: &i, suffix: inner, failedStatus: &failedStatus,
                                 into: &d, layer: layer) else { return false }
                }
                continue
            }
            previous = value
            i += size
        }
        return true
    }

    /// Octets the parameter needs before it can be read (for variable ones: their length or count octet).
    static func fixedSize(_ kind: ParameterKind) -> Int {
        switch kind {
        case .uint8, .int8, .hex8, .status, .addressType, .role, .bool, .lengthPrefixed, .list: return 1
        case .advertisingData(let prefixed): return prefixed ? 1 : 0
        case .uint16, .int16, .hex16, .handle, .opcode: return 2
        case .uint24, .hex24: return 3
        case .uint32, .hex32: return 4
        case .hex64: return 8
        case .address: return 6
        case .bytes(let count): return count
        case .text, .remaining, .perPHY, .repeated: return 0
        }
    }

    /// Little-endian integer of `size` octets at `i` (up to 8; the caller checked they are there).
    @inline(__always)
    static func integer(_ bytes: ArraySlice<UInt8>, _ i: Int, _ size: Int) -> UInt64 {
        var value: UInt64 = 0
        var k = 0
        while k < min(size, 8) {
            value |= UInt64(bytes[i + k]) << (8 * UInt64(k))
            k += 1
        }
        return value
    }

    static func addressTypeName(_ value: UInt64) -> String {
        switch value {
        case 0: return "public"
        case 1: return "random"
        case 2: return "public_identity"
        case 3: return "random_identity"
        case 0xFF: return "anonymous"
        default: return "0x" + hex(value, width: 2)
        }
    }
}
