@_spi(Testing) import Bluewire
import BluewireCore
import BluewireGATT
import BluewireTesting
import Synchronization
import Testing

/// A hostile central floods a Bluewire peripheral's GATT server over L2CAP on the virtual link with
/// seeded random and mutated ATT PDUs, at full speed (each batch is pushed without waiting for a
/// single answer), while a well-behaved Bluewire central uses the same server.
///
/// Proves: the server answers every request exactly once, in order, with a PDU that fits the
/// ATT_MTU and (for the sampled kinds whose answer the specification fixes) exactly the right
/// response or Error Response; it answers nothing else; its per-connection state stays within its
/// limits; it never drops the hostile link; and the well-behaved central's reads, long writes,
/// notifications and indications keep working and return what they should.
@Suite("Hostile central against the GATT server", .timeLimit(.minutes(1)))
struct HostileCentralTests {
    static let seed: UInt64 = 0x5EED_0000_B1E5_0007
    static let beforeExchange = 400
    static let randomPDUs = 10_000
    static let batchSize = 250

    @Test("seeded random and mutated PDUs: each request answered once as the spec says, bounded state, the other central served")
    func hostileAndWellBehavedCentrals() async throws {
        let bench = try await HostileBench.make()
        let hostile = bench.hostile
        var generator = HostileGenerator(seed: Self.seed, targets: bench.fixture.targets)
        var flood = Flood(hostile: hostile)
        let stop = Completion()
        let wellBehaved = Task { try await WellBehavedCentral.run(bench, until: stop) }

        // Before any MTU exchange (ATT_MTU 23): requests longer than that, and everything else.
        for _ in 0..<(Self.beforeExchange / Self.batchSize + 1) {
            for _ in 0..<min(Self.batchSize, Self.beforeExchange - flood.sent) { flood.send(generator.next(exchangingMTU: false), mtu: generator.mtu) }
            try await flood.awaitAnswers(bench)
        }

        // A Prepare Write flood: the queue takes its configured maximum, then Prepare Queue Full.
        let limit = 64
        flood.send(generator.executeWrite(flags: 0x00), mtu: generator.mtu)
        for i in 0..<(limit + 36) {
            let handle = bench.fixture.targets.writable[i % 2]
            flood.send(generator.prepareWrite(handle, offset: UInt16(i * 18), generator.random.bytes(18), accepted: i < limit), mtu: generator.mtu)
        }
        try await flood.awaitAnswers(bench)
        #expect(await bench.peripheral.serverState(for: bench.hostileHandle)?.preparedWrites == limit)
        flood.send(generator.executeWrite(flags: 0x00), mtu: generator.mtu)
        try await flood.awaitAnswers(bench)
        #expect(await bench.peripheral.serverState(for: bench.hostileHandle)?.preparedWrites == 0, "Execute Write (cancel) empties the queue")
        // Execute Write with nothing prepared, then a long write made of contiguous parts.
        flood.send(generator.executeWrite(flags: 0x01), mtu: generator.mtu)
        let control = bench.fixture.control.valueHandle
        let written = generator.random.bytes(180)
        for part in 0..<10 {
            flood.send(generator.prepareWrite(control, offset: UInt16(part * 18), Array(written[(part * 18)..<(part * 18 + 18)]), accepted: true), mtu: generator.mtu)
        }
        flood.send(generator.executeWrite(flags: 0x01), mtu: generator.mtu)
        flood.send(HostilePDU(bytes: [0x0A, UInt8(control & 0xFF), UInt8(control >> 8)], expectation: .exactly([0x0B] + written.prefix(generator.mtu - 1))), mtu: generator.mtu)
        try await flood.awaitAnswers(bench)

        // Then the MTU exchange, and the random flood.
        flood.send(generator.exchangeMTU(100), mtu: generator.mtu)
        #expect(generator.mtu == 100)
        while flood.sent < Self.beforeExchange + Self.randomPDUs {
            for _ in 0..<Self.batchSize { flood.send(generator.next(), mtu: generator.mtu) }
            try await flood.awaitAnswers(bench)
        }

        // L2CAP frames that lie (Core Vol 3 Part A §3.1, §7.2): each is dropped, and a valid request
        // right behind it is answered, so the server and the flood stay in step.
        let staticHandle = bench.fixture.staticHandle
        let readStatic = HostilePDU(
            bytes: [0x0A, UInt8(staticHandle & 0xFF), UInt8(staticHandle >> 8)],
            expectation: .exactly([0x0B] + bench.fixture.staticValue.prefix(generator.mtu - 1)))
        let header = { (length: Int) -> [UInt8] in [UInt8(length & 0xFF), UInt8(length >> 8), 0x04, 0x00] }
        hostile.sendACL(header(100) + readStatic.bytes + generator.random.bytes(7), start: true)  // cut short by the next start
        flood.send(readStatic, mtu: generator.mtu)
        hostile.sendACL(readStatic.bytes, start: false)  // a continuation with no start
        hostile.sendACL(header(3) + readStatic.bytes + [0xFF, 0xFF], start: true)  // longer than it says
        hostile.sendACL(header(0xFFFF) + generator.random.bytes(200), start: true)  // the largest PDU, never finished
        for _ in 0..<10 { hostile.sendACL(generator.random.bytes(200), start: false) }
        flood.send(readStatic, mtu: generator.mtu)
        hostile.sendACL(Array(header(3).prefix(2)), start: true)  // a valid request whose header is split
        hostile.sendACL(Array(header(3).suffix(2)) + readStatic.bytes, start: false)
        flood.expect(readStatic, mtu: generator.mtu)
        try await flood.awaitAnswers(bench)

        // A few L2CAP PDUs on channels a Bluewire peripheral does not use, and garbage on LE signaling.
        for i in 0..<10 {
            hostile.send(generator.random.bytes(i * 3), channel: i % 2 == 0 ? 0x0040 : 0x0007)
            hostile.send([0xE0 | UInt8(i), UInt8(i), 0x00, 0x00], channel: 0x0005)
        }
        // The server still answers the hostile central correctly after all that.
        flood.send(readStatic, mtu: generator.mtu)
        try await flood.awaitAnswers(bench)

        stop.finish()
        let rounds = try await wellBehaved.value
        #expect(rounds >= 3, "the well-behaved central was served while the flood went on (\(rounds) rounds)")
        try await bench.settleQuiet()

        // Every request answered exactly once, in order, as expected; nothing else.
        let received = hostile.receivedATT
        #expect(received.count == flood.expected.count, "\(flood.sent) PDUs sent, \(flood.expected.count) answers expected, \(received.count) received")
        var mismatches: [String] = []
        for (index, (expected, pdu)) in zip(flood.expected, received).enumerated() {
            if let why = expected.expectation.mismatch(pdu, mtu: expected.mtu) {
                mismatches.append("answer \(index) to \(hexString(expected.request.prefix(24))): got \(hexString(pdu.prefix(24))), \(why)")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) wrong answers, first: \(mismatches.prefix(5).joined(separator: "\n"))")
        #expect(flood.sent >= Self.beforeExchange + Self.randomPDUs)
        #expect(flood.exactChecks > flood.expected.count / 3, "enough answers checked against the specification's exact rule")
        for reply in hostile.receivedOnOtherChannels {
            #expect(reply.channel == 0x0005 && reply.payload.first == 0x01, "only Command Reject on LE signaling: \(reply)")
        }

        // Bounded: at every batch, nothing above the server's limits.
        #expect(flood.maximum.preparedWrites <= limit)
        #expect(flood.maximum.queuedIndications == 0, "nothing was indicated to the hostile central")
        #expect(flood.maximum.subscriptions <= bench.fixture.targets.configurations.count)
        #expect(flood.maximum.bearerPendingRequests == 0)
        #expect(flood.maximum.queuedACLPackets <= 8, "the peripheral's ACL queue for the hostile central stays small")
        let diagnostics = await bench.peripheral.diagnostics
        #expect(diagnostics.links == 2 && diagnostics.liveLinks == 2, "\(diagnostics)")
        #expect(diagnostics.requestWaiters == 0 && diagnostics.indicationTickets == 0 && diagnostics.aclPacketsQueued == 0, "\(diagnostics)")
        #expect(hostile.disconnectionReason == nil, "the server kept the hostile link")
        #expect(hostile.overruns == 0, "the hostile host respected the controller's buffers")
        for controller in [bench.peripheralController, bench.goodController, hostile.controller] {
            #expect(controller.violations.isEmpty, "\(controller.violations)")
        }
        await bench.close()
    }
}

/// The hostile central's PDUs in flight: what was sent, the answers expected so far (with the
/// ATT_MTU each must fit), and the largest server state seen.
struct Flood {
    struct Expected {
        var request: [UInt8]
        var expectation: HostileExpectation
        var mtu: Int
    }

    let hostile: RawATTCentral
    var sent = 0
    var expected: [Expected] = []
    var exactChecks = 0
    /// The largest of each `PeripheralConnectionState` count seen for the hostile central.
    struct Maximum {
        var preparedWrites = 0, queuedIndications = 0, subscriptions = 0, bearerPendingRequests = 0, queuedACLPackets = 0
    }

    var maximum = Maximum()

    init(hostile: RawATTCentral) { self.hostile = hostile }

    mutating func send(_ pdu: HostilePDU, mtu: Int) {
        hostile.send(pdu.bytes)
        expect(pdu, mtu: mtu)
    }

    /// Records what the server must answer to a PDU the test sent by other means.
    mutating func expect(_ pdu: HostilePDU, mtu: Int) {
        sent += 1
        guard pdu.expectation.expectsPDU else { return }
        expected.append(Expected(request: pdu.bytes, expectation: pdu.expectation, mtu: mtu))
        if case .answer = pdu.expectation {} else { exactChecks += 1 }
    }

    /// Waits until every answer expected so far has arrived, then records the server's state.
    mutating func awaitAnswers(_ bench: HostileBench, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let hostile = self.hostile, count = expected.count
        await hostile.waitForATT(count: count)
        guard let state = await bench.peripheral.serverState(for: bench.hostileHandle) else {
            Issue.record("the peripheral dropped the hostile central", sourceLocation: sourceLocation)
            return
        }
        maximum.preparedWrites = max(maximum.preparedWrites, state.preparedWrites)
        maximum.queuedIndications = max(maximum.queuedIndications, state.queuedIndications)
        maximum.subscriptions = max(maximum.subscriptions, state.subscriptions)
        maximum.bearerPendingRequests = max(maximum.bearerPendingRequests, state.bearerPendingRequests)
        maximum.queuedACLPackets = max(maximum.queuedACLPackets, state.queuedACLPackets)
    }
}
