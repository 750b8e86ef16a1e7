import BluewireCore

/// What the GATT server must send back for one PDU from the hostile central, as Core Vol 3 Part F
/// says (§3.3: every request gets exactly one response or Error Response, commands and unknown
/// commands none; §3.4.1.1: unknown requests get Request Not Supported; a PDU of the wrong length
/// Invalid PDU).
enum HostileExpectation: Sendable, Equatable {
    /// No PDU at all (commands, confirmations, responses and notifications sent to a server).
    case nothing
    /// Exactly one PDU: the request's response opcode, or an Error Response naming the request.
    case answer(request: UInt8)
    /// Exactly this Error Response (the handle is not checked when nil).
    case error(request: UInt8, handle: UInt16?, code: UInt8)
    /// Exactly these bytes.
    case exactly([UInt8])

    var expectsPDU: Bool { self != .nothing }

    /// Why `pdu` does not meet the expectation, or nil if it does. `mtu` is the ATT_MTU in force
    /// when the request was answered: no PDU may be longer (§3.2.8).
    func mismatch(_ pdu: [UInt8], mtu: Int) -> String? {
        if pdu.count > mtu { return "\(pdu.count) bytes, longer than ATT_MTU \(mtu)" }
        switch self {
        case .nothing:
            return "no PDU expected"
        case .answer(let request):
            if pdu.first == request &+ 1 { return nil }
            if pdu.count == 5, pdu[0] == 0x01, pdu[1] == request { return nil }
            return "neither the response to 0x\(hex(request, width: 2)) nor an Error Response naming it"
        case .error(let request, let handle, let code):
            guard pdu.count == 5, pdu[0] == 0x01, pdu[1] == request, pdu[4] == code else {
                return "expected Error Response to 0x\(hex(request, width: 2)) with code 0x\(hex(code, width: 2))"
            }
            if let handle, UInt16(pdu[2]) | UInt16(pdu[3]) << 8 != handle {
                return "expected the Error Response to name handle 0x\(hex(handle, width: 4))"
            }
            return nil
        case .exactly(let bytes):
            return pdu == bytes ? nil : "expected \(hexString(bytes))"
        }
    }
}

/// One PDU for the hostile central to send, and what it must get.
struct HostilePDU: Sendable {
    var bytes: [UInt8]
    var expectation: HostileExpectation
}

/// splitmix64: the same seed gives the same PDUs on every run and machine.
struct SplitMix64 {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }
    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in byte() } }
    mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }
    mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }
}

/// The database facts the generator needs to know what the server must answer.
struct HostileTargets: Sendable {
    var lastHandle: UInt16
    /// A read-only value longer than any ATT_MTU used here, and its bytes.
    var staticHandle: UInt16
    var staticValue: [UInt8]
    /// Handles a write is accepted on (with a value that fits).
    var writable: [UInt16]
    /// Client Characteristic Configuration descriptors.
    var configurations: [UInt16]
}

/// Seeded random and mutated ATT PDUs, with what the server must answer to each. It follows the
/// ATT_MTU the server will be using, which changes at the first well-formed Exchange MTU Request.
struct HostileGenerator {
    static let serverMTU: UInt16 = 517
    /// Requests whose parameters have one fixed length (opcode included).
    static let fixedLength: [UInt8: Int] = [0x02: 3, 0x04: 5, 0x0A: 3, 0x0C: 5, 0x18: 2]
    /// Every opcode ATT defines (Core Vol 3 Part F §3.4.8), for picking undefined ones.
    static let defined: Set<UInt8> = Set(Array(0x01...0x13) + Array(0x16...0x19) + [0x1B, 0x1D, 0x1E, 0x20, 0x21, 0x23, 0x52, 0xD2])
    static let requests: [UInt8] = [0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20]

    var random: SplitMix64
    let targets: HostileTargets
    /// The ATT_MTU the server uses (23 until an exchange).
    private(set) var mtu = 23
    private var exchanged = false

    init(seed: UInt64, targets: HostileTargets) {
        random = SplitMix64(state: seed)
        self.targets = targets
    }

    private static func le(_ value: UInt16) -> [UInt8] { [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)] }

    /// A handle: zero, valid, just past the table, or anywhere.
    mutating func handle() -> UInt16 {
        switch random.int(0...9) {
        case 0: return 0
        case 1: return targets.lastHandle &+ 1
        case 2: return UInt16(truncatingIfNeeded: random.next())
        case 3: return 0xFFFF
        default: return UInt16(random.int(1...Int(targets.lastHandle)))
        }
    }

    /// An Exchange MTU Request, well-formed: the response carries the server's Rx MTU, and the
    /// first one sets the ATT_MTU to the smaller of the two, at least 23 (§3.4.2).
    mutating func exchangeMTU(_ clientMTU: UInt16) -> HostilePDU {
        defer {
            if !exchanged {
                exchanged = true
                mtu = max(23, Int(min(clientMTU, Self.serverMTU)))
            }
        }
        return HostilePDU(bytes: [0x02] + Self.le(clientMTU), expectation: .exactly([0x03] + Self.le(Self.serverMTU)))
    }

    /// A Prepare Write Request of `value` at `offset` that the server must queue and echo (§3.4.6.1).
    func prepareWrite(_ handle: UInt16, offset: UInt16, _ value: [UInt8], accepted: Bool) -> HostilePDU {
        let bytes = [0x16] + Self.le(handle) + Self.le(offset) + value
        if accepted { return HostilePDU(bytes: bytes, expectation: .exactly([0x17] + Array(bytes.dropFirst()))) }
        return HostilePDU(bytes: bytes, expectation: .error(request: 0x16, handle: handle, code: 0x09))
    }

    /// Execute Write Request (§3.4.6.3): flags 0x00 cancels, 0x01 writes; with nothing queued,
    /// either is simply answered.
    func executeWrite(flags: UInt8, expecting: HostileExpectation = .exactly([0x19])) -> HostilePDU {
        HostilePDU(bytes: [0x18, flags], expectation: expecting)
    }

    /// One PDU of a random kind: well-formed requests with random fields (checked exactly where the
    /// answer does not depend on what earlier writes did), truncated and oversized requests,
    /// undefined opcodes, commands, confirmations without indications, and PDUs of the client role.
    mutating func next(exchangingMTU: Bool = true) -> HostilePDU {
        let t = targets
        var kind = random.int(0...21)
        // Before the MTU exchange, anything but the exchange (arbitrary bytes could be one).
        while !exchangingMTU && (kind == 10 || kind == 21) { kind = random.int(0...21) }
        switch kind {
        case 0:  // Read Request
            let h = handle()
            if h == 0 || h > t.lastHandle { return error([0x0A] + Self.le(h), 0x0A, h, 0x01) }
            if h == t.staticHandle { return exact([0x0A] + Self.le(h), [0x0B] + t.staticValue.prefix(mtu - 1)) }
            return answer([0x0A] + Self.le(h))
        case 1:  // Read Blob Request of the static value: its part, empty at its end, Invalid Offset past it
            let offset = random.pick([0, random.int(1...t.staticValue.count), t.staticValue.count, t.staticValue.count + random.int(1...400)])
            let bytes = [0x0C] + Self.le(t.staticHandle) + Self.le(UInt16(offset))
            if offset > t.staticValue.count { return error(bytes, 0x0C, t.staticHandle, 0x07) }
            return exact(bytes, [0x0D] + t.staticValue[offset...].prefix(mtu - 1))
        case 2:  // Find Information: a zero or reversed range is Invalid Handle, one past the table Attribute Not Found
            let (start, end) = range()
            let bytes = [0x04] + Self.le(start) + Self.le(end)
            if start == 0 || start > end { return error(bytes, 0x04, start, 0x01) }
            if start > t.lastHandle { return error(bytes, 0x04, start, 0x0A) }
            return answer(bytes)
        case 3:  // Read By Group Type: only service declarations group (Part G §2.5.3)
            let (start, end) = range()
            let type: [UInt8] = random.pick([[0x00, 0x28], [0x01, 0x28], [0x03, 0x28], random.bytes(2), random.bytes(16)])
            let bytes = [0x10] + Self.le(start) + Self.le(end) + type
            if start == 0 || start > end { return error(bytes, 0x10, start, 0x01) }
            if type == [0x03, 0x28] { return error(bytes, 0x10, start, 0x10) }
            return answer(bytes)
        case 4:  // Read By Type, random range and type
            let (start, end) = range()
            return answer([0x08] + Self.le(start) + Self.le(end) + (random.chance(70) ? random.bytes(2) : random.bytes(16)))
        case 5:  // Find By Type Value
            let (start, end) = range()
            return answer([0x06] + Self.le(start) + Self.le(end) + random.bytes(2) + random.bytes(random.int(0...20)))
        case 6:  // Write Request: read-only, unknown handle, a value that fits, or one that does not
            switch random.int(0...3) {
            case 0: return error([0x12] + Self.le(t.staticHandle) + random.bytes(random.int(0...mtu - 3)), 0x12, t.staticHandle, 0x03)
            case 1:
                let h = t.lastHandle &+ UInt16(random.int(1...100))
                return error([0x12] + Self.le(h) + random.bytes(random.int(0...mtu - 3)), 0x12, h, 0x01)
            case 2: return exact([0x12] + Self.le(random.pick(t.writable)) + random.bytes(random.int(0...min(mtu - 3, 64))), [0x13])
            default: return answer([0x12] + Self.le(handle()) + random.bytes(random.int(0...600)))
            }
        case 7:  // Prepare Write, anything
            return answer([0x16] + Self.le(handle()) + Self.le(UInt16(truncatingIfNeeded: random.next())) + random.bytes(random.int(0...mtu)))
        case 8:  // Execute Write, including reserved flags
            return answer([0x18, random.pick([0x00, 0x01, random.byte()])])
        case 9:  // Read Multiple / Read Multiple Variable
            let handles = (0..<random.int(1...6)).flatMap { _ in Self.le(handle()) }
            return answer([random.pick([0x0E, 0x20] as [UInt8])] + handles)
        case 10:  // Exchange MTU, well-formed (the first sets the MTU)
            return exchangeMTU(random.pick([0, 22, 23, 64, 185, 517, 0xFFFF, UInt16(truncatingIfNeeded: random.next())]))
        case 11:  // a request cut short
            let opcode = random.pick(Self.requests)
            let full = [opcode] + random.bytes(25)
            if let length = Self.fixedLength[opcode] {
                return error(Array(full.prefix(random.int(1...(length - 1)))), opcode, nil, 0x04)
            }
            return answer(Array(full.prefix(random.int(1...6))))
        case 12:  // a fixed-length request with bytes after its end
            let opcode = random.pick(Array(Self.fixedLength.keys).sorted())
            let length = Self.fixedLength[opcode] ?? 1
            return error([opcode] + random.bytes(length - 1 + random.int(1...40)), opcode, nil, 0x04)
        case 13:  // an undefined opcode without the Command Flag: a request the server does not support
            let opcode = undefined(command: false)
            return error([opcode] + random.bytes(random.int(0...30)), opcode, 0, 0x06)
        case 14:  // an undefined command: ignored
            return nothing([undefined(command: true)] + random.bytes(random.int(0...30)))
        case 15:  // Write Command / Signed Write Command: never answered
            return nothing([random.pick([0x52, 0xD2] as [UInt8])] + Self.le(handle()) + random.bytes(random.int(0...40)))
        case 16:  // Handle Value Confirmation with no indication outstanding
            return nothing([0x1E] + random.bytes(random.chance(80) ? 0 : random.int(1...4)))
        case 17:  // responses and notifications sent to a server
            let opcode = random.pick([0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x21, 0x1B, 0x23] as [UInt8])
            return nothing([opcode] + random.bytes(random.int(0...30)))
        case 18:  // an indication: the peer's client side confirms a well-formed one (§3.4.7.2)
            let bytes = [0x1D] + random.bytes(random.int(0...30))
            return bytes.count >= 3 ? exact(bytes, [0x1E]) : nothing(bytes)
        case 19:  // an empty PDU: nothing to answer
            return nothing([])
        case 20:  // a CCCD written: the server may refuse a configuration its characteristic cannot do
            return answer([0x12] + Self.le(random.pick(t.configurations)) + [random.pick([0, 1, 2, 3] as [UInt8]), 0])
        default:  // bytes, anything
            return classify(random.bytes(random.int(1...80)))
        }
    }

    private mutating func range() -> (UInt16, UInt16) {
        switch random.int(0...5) {
        case 0: return (0, UInt16(random.int(0...0xFFFF)))
        case 1:
            let start = UInt16(random.int(2...0xFFFF))
            return (start, start - UInt16(random.int(1...Int(min(start - 1, 50)))))
        case 2: return (targets.lastHandle &+ 1, 0xFFFF)
        default: return (UInt16(random.int(1...Int(targets.lastHandle))), random.chance(50) ? 0xFFFF : UInt16(random.int(1...Int(targets.lastHandle))))
        }
    }

    private mutating func undefined(command: Bool) -> UInt8 {
        while true {
            let opcode = command ? random.byte() | 0x40 : random.byte() & ~0x40
            if !Self.defined.contains(opcode) { return opcode }
        }
    }

    /// What arbitrary bytes must get, from their first byte.
    private mutating func classify(_ bytes: [UInt8]) -> HostilePDU {
        let opcode = bytes[0]
        if opcode == 0x02, bytes.count == 3 { return exchangeMTU(UInt16(bytes[1]) | UInt16(bytes[2]) << 8) }
        if let length = Self.fixedLength[opcode], bytes.count != length { return error(bytes, opcode, nil, 0x04) }
        if Self.requests.contains(opcode) { return answer(bytes) }
        if opcode == 0x1D { return bytes.count >= 3 ? exact(bytes, [0x1E]) : nothing(bytes) }
        if !Self.defined.contains(opcode) && opcode & 0x40 == 0 { return error(bytes, opcode, 0, 0x06) }
        return nothing(bytes)
    }

    private func answer(_ bytes: [UInt8]) -> HostilePDU { HostilePDU(bytes: bytes, expectation: .answer(request: bytes[0])) }
    private func exact(_ bytes: [UInt8], _ response: [UInt8]) -> HostilePDU { HostilePDU(bytes: bytes, expectation: .exactly(response)) }
    private func nothing(_ bytes: [UInt8]) -> HostilePDU { HostilePDU(bytes: bytes, expectation: .nothing) }
    private func error(_ bytes: [UInt8], _ request: UInt8, _ handle: UInt16?, _ code: UInt8) -> HostilePDU {
        HostilePDU(bytes: bytes, expectation: .error(request: request, handle: handle, code: code))
    }
}
