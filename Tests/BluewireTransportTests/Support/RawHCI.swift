import BluewireCore
import BluewireTransport

/// Just enough raw HCI to drive a bumble controller from tests of the transport and of the peer
/// script (the real HCI layer lives in BluewireHCI; these tests must not depend on it).
struct RawHCI {
    let transport: any HCITransport
    var iterator: HCIInboundPackets.AsyncIterator

    init(_ transport: any HCITransport) {
        self.transport = transport
        iterator = transport.inbound.makeAsyncIterator()
    }

    struct Timeout: Error, CustomStringConvertible {
        var what: String
        var description: String { "timed out waiting for \(what)" }
    }

    /// Sends a command and returns its Command Complete return parameters (or Command Status).
    @discardableResult
    mutating func command(_ opcode: UInt16, _ parameters: [UInt8] = []) async throws -> [UInt8] {
        try await transport.send(HCIPacket(type: .command, payload: [UInt8(opcode & 0xFF), UInt8(opcode >> 8), UInt8(parameters.count)] + parameters))
        let answer = try await next("the answer to opcode 0x\(hex(opcode, width: 4))") { packet in
            let p = Array(packet.payload)
            guard packet.type == .event else { return false }
            if p[0] == 0x0E, p.count >= 5 { return UInt16(p[3]) | UInt16(p[4]) << 8 == opcode }
            if p[0] == 0x0F, p.count >= 6 { return UInt16(p[4]) | UInt16(p[5]) << 8 == opcode }
            return false
        }
        return Array(answer.payload.dropFirst(answer.payload.first == 0x0E ? 5 : 2))
    }

    /// The next packet that satisfies `matches`, skipping others, within `timeout`.
    mutating func next(_ what: String, timeout: Duration = .seconds(15), where matches: (HCIPacket) -> Bool) async throws -> HCIPacket {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard case .packet(let packet) = await nextInbound(transport, within: deadline - ContinuousClock.now) else { break }
            if matches(packet) { return packet }
        }
        throw Timeout(what: what)
    }

    /// The next LE Meta event with `subevent`, as its bytes after the subevent code.
    mutating func leMeta(_ subevent: UInt8, timeout: Duration = .seconds(15)) async throws -> [UInt8] {
        let packet = try await next("LE Meta subevent 0x\(hex(subevent, width: 2))", timeout: timeout) {
            $0.type == .event && $0.payload.count > 2 && $0.payload[$0.payload.startIndex] == 0x3E
                && $0.payload[$0.payload.startIndex + 2] == subevent
        }
        return Array(packet.payload.dropFirst(3))
    }

    /// Reset, event masks with everything LE enabled, and a random static own address.
    mutating func bringUp(randomAddress: [UInt8]) async throws {
        try await command(0x0C03)
        try await command(0x0C01, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x3F])  // Set Event Mask (LE Meta: bit 61)
        try await command(0x2001, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])  // LE Set Event Mask
        try await command(0x2005, randomAddress)  // LE Set Random Address (little-endian)
    }
}

/// A random static address (two top bits set) in HCI byte order, and its text form.
func randomStaticAddress(_ last: UInt8) -> (bytes: [UInt8], text: String) {
    let bytes: [UInt8] = [last, 0x55, 0x44, 0x33, 0x22, 0xC1]
    return (bytes, bytes.reversed().map { hexByteUpper($0) }.joined(separator: ":"))
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs contiguously in the array.
    func containsSequence(_ needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { Array(self[$0..<($0 + needle.count)]) == needle }
    }
}
