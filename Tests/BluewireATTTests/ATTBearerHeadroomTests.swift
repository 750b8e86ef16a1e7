import BluewireCore
import Testing

@testable import BluewireATT

/// `ATTBearer(headroom:)`: every PDU comes out behind that many zeroed octets, and nothing else
/// changes. The same script runs on a bearer without headroom and on one with 8 octets (the host
/// engine's), and the two must agree PDU for PDU and event for event.
@Suite("ATT bearer: PDUs behind reserved headroom")
struct ATTBearerHeadroomTests {
    /// Drives both roles through every path that sends: requests queued behind an outstanding one,
    /// a command, an indication's confirmation, an MTU exchange answered by the bearer, a request
    /// answered by the server, the Error Responses the bearer sends itself, notifications (value
    /// and encoded, cut to the MTU), and indications queued behind an outstanding one.
    static func script(_ bearer: inout ATTBearer) throws -> (sent: [[UInt8]], events: [ATTBearerEvent]) {
        _ = try bearer.send(request: .readRequest(handle: 3), now: .zero)
        _ = try bearer.send(request: .writeRequest(handle: 5, value: [1, 2, 3]), now: .zero)
        try bearer.send(command: .writeCommand(handle: 6, value: [9]))
        bearer.receive([0x0B, 0x42], now: .zero)
        bearer.receive([0x13], now: .zero)
        bearer.receive([0x1D, 0x07, 0x00, 0xAA], now: .zero)
        bearer.receive([0x02, 0x30, 0x00], now: .zero)
        bearer.receive([0x0A, 0x03, 0x00], now: .zero)
        try bearer.respond(.readResponse(value: Array(repeating: 7, count: 80)[...]))
        bearer.receive([0x3F, 0x01, 0x02], now: .zero)
        bearer.receive([0x0A, 0x03], now: .zero)
        try bearer.notify(handle: 9, value: Array(repeating: 5, count: 60)[...])
        try bearer.notify(encoded: [0x1B, 0x09, 0x00] + Array(repeating: 6, count: 60))
        try bearer.notify(encoded: [0x23, 0x09, 0x00, 0x01, 0x00, 0x44])
        _ = try bearer.indicate(handle: 11, value: [1][...], now: .zero)
        _ = try bearer.indicate(handle: 12, value: [2][...], now: .zero)
        bearer.receive([0x1E], now: .zero)
        return drain(&bearer)
    }

    @Test("Each PDU is the one a bearer without headroom sends, behind 8 zeroed octets")
    func sameDialogueBehindHeadroom() throws {
        var plain = ATTBearer(preferredMTU: 48)
        var framed = ATTBearer(preferredMTU: 48, headroom: 8)
        let expected = try Self.script(&plain)
        let actual = try Self.script(&framed)
        #expect(actual.events == expected.events)
        #expect(actual.sent.count == expected.sent.count)
        #expect(actual.sent.allSatisfy { $0.count >= 8 && $0.prefix(8).allSatisfy { $0 == 0 } })
        #expect(actual.sent.map { Array($0.dropFirst(8)) } == expected.sent)
        // The script reached every path it meant to: 2 requests, the command, the confirmation, the
        // MTU response, the read response, 2 Error Responses, 3 notifications, 2 indications.
        #expect(expected.sent.count == 13)
    }

    @Test("ATT_MTU limits the PDU, not the headroom in front of it")
    func mtuCountsThePDUAlone() throws {
        var bearer = ATTBearer(headroom: 8)
        // A Write Command of exactly ATT_MTU (23) octets: opcode, handle, 20 octets of value.
        try bearer.send(command: .writeCommand(handle: 6, value: Array(repeating: 1, count: 20)[...]))
        #expect(drain(&bearer).sent.map(\.count) == [8 + 23])
        #expect(throws: ATTBearerError.pduTooLong(length: 24, mtu: 23)) {
            try bearer.send(command: .writeCommand(handle: 6, value: Array(repeating: 1, count: 21)[...]))
        }
        #expect(throws: ATTBearerError.pduTooLong(length: 24, mtu: 23)) {
            _ = try bearer.send(request: .writeRequest(handle: 6, value: Array(repeating: 1, count: 21)[...]), now: .zero)
        }
    }

    @Test("A negative headroom is none")
    func negativeHeadroomIsNone() throws {
        var bearer = ATTBearer(headroom: -3)
        #expect(bearer.headroom == 0)
        try bearer.send(command: .writeCommand(handle: 6, value: [1]))
        #expect(drain(&bearer).sent == [[0x52, 0x06, 0x00, 0x01]])
    }
}
