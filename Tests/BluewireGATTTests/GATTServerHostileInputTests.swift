import BluewireATT
import BluewireCore
import Testing
@testable import BluewireGATT

/// SplitMix64: a small deterministic generator, so a failing run can be replayed from its seed.
struct SplitMix64 {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }
}

@Suite struct GATTServerHostileInputTests {
    @Test func unknownRequestsAreNotSupportedAndUnknownCommandsIgnored() throws {
        var server = try ServerFixture().server()
        #expect(server.exchange([0x14, 0x01, 0x00]) == [0x01, 0x14, 0x00, 0x00, 0x06])
        #expect(server.exchange([0x3F]) == [0x01, 0x3F, 0x00, 0x00, 0x06])
        #expect(server.exchange([0x00]) == [0x01, 0x00, 0x00, 0x00, 0x06])
        #expect(server.exchange([0x92, 0x01]) == [0x01, 0x92, 0x00, 0x00, 0x06])
        #expect(server.exchange([0x7F, 0x01, 0x02]) == nil)
        #expect(server.exchange([0x53]) == nil)
        #expect(server.exchange([0xFF]) == nil)
    }

    @Test func clientRolePDUsAndEmptyPDUsAreIgnored() throws {
        var server = try ServerFixture().server()
        for pdu: [UInt8] in [[], [0x01, 0x0A, 0x03, 0x00, 0x01], [0x0B, 0x41], [0x1B, 0x03, 0x00, 0x01],
                             [0x1D, 0x03, 0x00], [0x13], [0x19], [0x03, 0x17, 0x00], [0x23, 0x00]] {
            #expect(server.exchange(pdu) == nil, "\(pdu)")
        }
        #expect(server.takeEvents().isEmpty)
    }

    @Test func pdusLongerThanTheMTUAreInvalidPDU() throws {
        var server = try ServerFixture().server()
        let write: [UInt8] = [0x12, 0x11, 0x00] + Array(repeating: 1, count: 21)
        #expect(server.exchange(write) == [0x01, 0x12, 0x00, 0x00, 0x04])
        #expect(server.exchange([0x52, 0x11, 0x00] + Array(repeating: 1, count: 21)) == nil)
        #expect(server.database[handle: 0x11]?.cachedValue == ServerFixture.longValue)
        _ = server.exchange([0x02, 0x05, 0x02])
        #expect(server.exchange(write) == [0x13])
    }

    @Test func aPrepareWriteFloodNeverGrowsTheQueue() throws {
        var server = try ServerFixture().server()
        var fullAnswers = 0
        for i in 0..<10_000 {
            let response = server.exchange([0x16, 0x11, 0x00, UInt8(i & 0xFF), UInt8(i >> 8 & 0x01)] + Array(repeating: 0xAA, count: 18))
            if response == [0x01, 0x16, 0x11, 0x00, 0x09] { fullAnswers += 1 }
        }
        // 64 entries (1152 bytes, under the 4096-byte bound) fit; everything after is refused.
        #expect(server.preparedWriteCount(for: conn) == 64)
        #expect(fullAnswers == 10_000 - 64)
        #expect(server.exchange([0x18, 0x00]) == [0x19])
        #expect(server.preparedWriteCount(for: conn) == 0)
    }

    @Test func theEventBufferIsBounded() throws {
        var server = try ServerFixture().server(GATTServerConfiguration(maximumPendingEvents: 4))
        for i in 0..<10 {
            #expect(server.exchange([0x12, 0x0D, 0x00, UInt8((i + 1) & 1), 0x00]) == [0x13])
        }
        #expect(server.takeEvents().count == 4)
        #expect(server.droppedEventCount == 6)
    }

    /// A PDU whose fields are shaped like the opcode's (handles in or near the table, real types and
    /// values), with a random length now and then, so random input gets past the format checks.
    func plausiblePDU(_ opcode: UInt8, _ rng: inout SplitMix64) -> [UInt8] {
        func handle() -> [UInt8] {
            let h = rng.below(8) == 0 ? UInt16(truncatingIfNeeded: rng.next()) : UInt16(rng.below(0x24))
            return [UInt8(h & 0xFF), UInt8(h >> 8)]
        }
        let types: [[UInt8]] = [[0x00, 0x28], [0x01, 0x28], [0x03, 0x28], [0x02, 0x29], [0x19, 0x2A], [0x01, 0xFF],
                                ServerFixture.longCharacteristic.bytes128, [rng.byte(), rng.byte()]]
        let type = types[rng.below(types.count)]
        let value = (0..<rng.below(rng.below(10) == 0 ? 530 : 20)).map { _ in rng.byte() }
        var pdu: [UInt8] = [opcode]
        switch opcode {
        case 0x02: pdu += [rng.byte(), UInt8(rng.below(3))]
        case 0x04: pdu += handle() + handle()
        case 0x06: pdu += handle() + [0xFF, 0xFF] + type.prefix(2) + (rng.below(2) == 0 ? [0x0F, 0x18] : value)
        case 0x08, 0x10: pdu += (rng.below(3) == 0 ? handle() : [0x01, 0x00]) + [0xFF, 0xFF] + type
        case 0x0A: pdu += handle()
        case 0x0C: pdu += handle() + [UInt8(rng.below(40)), UInt8(rng.below(2))]
        case 0x0E, 0x20: for _ in 0..<rng.below(5) { pdu += handle() }
        case 0x12, 0x52, 0xD2: pdu += handle() + value
        case 0x16: pdu += handle() + [UInt8(rng.below(40)), 0x00] + value
        case 0x18: pdu += [UInt8(rng.below(3))]
        default: pdu += value
        }
        if rng.below(16) == 0 { pdu.removeLast(min(pdu.count - 1, rng.below(3))) }
        return pdu
    }

    /// Random PDUs, biased towards real opcodes and handles of the fixture so they reach deep into the
    /// request handlers, from three connections: every request gets exactly one well-formed answer of
    /// the right kind that fits the MTU, nothing else gets a response, and no state grows past its
    /// bound.
    @Test(arguments: [1 as UInt64, 2, 3, 0xB10E_5EED])
    func randomPDUsAreAlwaysAnsweredCorrectlyAndStateStaysBounded(seed: UInt64) throws {
        let configuration = GATTServerConfiguration(
            maximumPreparedWrites: 8, maximumPreparedWriteBytes: 100, maximumQueuedIndications: 3, maximumPendingEvents: 50)
        var server = try ServerFixture().server(configuration)
        var rng = SplitMix64(state: seed)
        let opcodes: [UInt8] = [
            0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20, 0x52, 0xD2, 0x1E,
            0x01, 0x03, 0x0B, 0x1B, 0x1D, 0x14, 0x7F, 0x92,
        ]
        let connections: [UInt16] = [0x0040, 0x0041, 0x0042]
        var successes = Set<UInt8>()
        for step in 0..<20_000 {
            let connection = connections[rng.below(3)]
            let opcode = rng.below(10) == 0 ? rng.byte() : opcodes[rng.below(opcodes.count)]
            var pdu: [UInt8]
            if rng.below(2) == 0 {
                pdu = plausiblePDU(opcode, &rng)
            } else {
                pdu = [opcode]
                let length = rng.below(20) == 0 ? rng.below(600) : rng.below(24)
                for _ in 0..<length { pdu.append(rng.below(3) == 0 ? 0 : rng.byte()) }
            }
            let mtu = server.mtu(for: connection)
            let response = server.handle(pdu, from: connection)
            let isRequest = GATTServer.requestOpcodes.contains(ATTOpcode(opcode))
                || (GATTServer.isUnknown(ATTOpcode(opcode)) && opcode & 0x40 == 0)
            if isRequest {
                let bytes = try #require(response, "step \(step): request \(hexString(pdu)) got no answer")
                #expect(bytes.count <= max(mtu, server.mtu(for: connection)), "step \(step)")
                let decoded = try ATTPDU(decoding: bytes)
                if case .errorResponse(let requestOpcode, _, _) = decoded {
                    #expect(requestOpcode.rawValue == opcode, "step \(step)")
                } else {
                    successes.insert(bytes[0])
                    #expect(bytes[0] == opcode + 1, "step \(step): \(hexString(pdu)) → \(hexString(bytes))")
                }
            } else if opcode == 0x1E {
                if let bytes = response { #expect(bytes[0] == 0x1D) }
            } else {
                #expect(response == nil, "step \(step): \(hexString(pdu))")
            }
            if rng.below(50) == 0 { _ = try server.indicate(handle: 0x11, value: [UInt8(step & 0xFF)]) }
            if rng.below(50) == 0 { _ = try server.notify(handle: 0x0C, value: [1, 2, 3]) }
            if rng.below(500) == 0 { _ = server.takeEvents() }
            for c in connections {
                #expect(server.preparedWriteCount(for: c) <= 8)
                #expect(server.queuedIndicationCount(for: c) <= 3)
                #expect(server.mtu(for: c) >= 23 && server.mtu(for: c) <= 517)
            }
            #expect(server.connectionCount <= 3)
        }
        // The inputs reached the success paths too, not only the error checks in front of them.
        #expect(successes.isSuperset(of: [0x03, 0x05, 0x09, 0x0B, 0x0D, 0x0F, 0x13, 0x17, 0x19, 0x21]), "\(successes.sorted())")
        #expect(server.takeEvents().count <= 50)
        #expect(server.database.attributes.allSatisfy { ($0.cachedValue?.count ?? 0) <= 512 })
        #expect(server.database.attributes.count == 31)
    }
}
