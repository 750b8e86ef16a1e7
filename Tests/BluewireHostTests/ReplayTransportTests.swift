import Bluewire
import BluewireCore
import BluewireSnoop
import BluewireTesting
import BluewireTransport
import Foundation
import HostTestSupport
import Testing

/// A capture written packet by packet with the btsnoop writer.
struct ReplayCapture {
    var bytes = BTSnoopWriter().fileHeader
    var time: Int64 = BTSnoopWriter.timestamp(unixMicroseconds: 1_700_000_000_000_000)

    mutating func add(_ type: HCIPacketType, _ payload: [UInt8], _ direction: PacketDirection, after gap: Int64 = 1_000) {
        time += gap
        BTSnoopWriter().appendRecord(HCIPacket(type: type, payload: payload), direction: direction, timestamp: time, to: &bytes)
    }

    mutating func command(_ payload: [UInt8]) { add(.command, payload, .hostToController) }
    mutating func event(_ payload: [UInt8], after gap: Int64 = 1_000) { add(.event, payload, .controllerToHost, after: gap) }
    mutating func acl(_ payload: [UInt8], _ direction: PacketDirection) { add(.acl, payload, direction) }

    var script: ReplayScript { get throws { try ReplayScript(captureBytes: bytes) } }

    static let reset: [UInt8] = [0x03, 0x0C, 0x00]
    static let resetComplete: [UInt8] = [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]
    static let readLocalVersion: [UInt8] = [0x01, 0x10, 0x00]
    static let readLocalVersionComplete: [UInt8] = [0x0E, 0x0C, 0x01, 0x01, 0x10, 0x00, 0x0C, 0x34, 0x12, 0x0C, 0x5F, 0x00, 0x78, 0x56]
    static let readBufferSize: [UInt8] = [0x02, 0x20, 0x00]
    static let readBufferSizeComplete: [UInt8] = [0x0E, 0x07, 0x01, 0x02, 0x20, 0x00, 0xFB, 0x00, 0x0F]

    /// Reset, Read Local Version Information, LE Read Buffer Size, each answered by its Command Complete.
    static var bringUp: ReplayCapture {
        var capture = ReplayCapture()
        capture.command(reset)
        capture.event(resetComplete)
        capture.command(readLocalVersion)
        capture.event(readLocalVersionComplete)
        capture.command(readBufferSize)
        capture.event(readBufferSizeComplete)
        return capture
    }
}

/// What a scripted host saw: each packet delivered, in order, and how the inbound sequence ended.
actor InboundLog {
    var packets: [HCIPacket] = []
    var endedCleanly = false
    var endError: TransportError?

    func drain(_ transport: ReplayTransport) async {
        var iterator = transport.inbound.makeAsyncIterator()
        do throws(TransportError) {
            while let packet = try await iterator.next() { packets.append(packet) }
            endedCleanly = true
        } catch {
            endError = error
        }
    }
}

/// Sends `payload` as a command and returns the next inbound packet.
func exchange(_ transport: ReplayTransport, _ iterator: inout HCIInboundPackets.AsyncIterator, command payload: [UInt8]) async throws -> HCIPacket? {
    try await transport.send(HCIPacket(type: .command, payload: payload))
    return try await iterator.next()
}

@Suite("ReplayTransport: a capture as the controller")
struct ReplayTransportTests {
    @Test("each Command Complete is delivered once the host has sent the command before it, then inbound ends")
    func hostDrivesThePace() async throws {
        let transport = ReplayTransport(script: try ReplayCapture.bringUp.script)
        var iterator = transport.inbound.makeAsyncIterator()
        #expect(await transport.deliveredCount == 0, "nothing may be delivered before the host sends Reset")
        #expect(try await exchange(transport, &iterator, command: ReplayCapture.reset)?.payload.elementsEqual(ReplayCapture.resetComplete) == true)
        #expect(await transport.deliveredCount == 1)
        #expect(try await exchange(transport, &iterator, command: ReplayCapture.readLocalVersion)?.payload.elementsEqual(ReplayCapture.readLocalVersionComplete) == true)
        #expect(try await exchange(transport, &iterator, command: ReplayCapture.readBufferSize)?.payload.elementsEqual(ReplayCapture.readBufferSizeComplete) == true)
        #expect(try await iterator.next() == nil, "an exhausted capture ends inbound cleanly")
        #expect(await transport.isExhausted)
        try await transport.verify()
    }

    @Test("a packet differing from the capture fails send and inbound with the record index and a hex diff")
    func alteredPacketFailsWithDiff() async throws {
        let transport = ReplayTransport(script: try ReplayCapture.bringUp.script)
        let log = InboundLog()
        let reader = Task { await log.drain(transport) }
        try await transport.send(HCIPacket(type: .command, payload: ReplayCapture.reset))
        var altered = ReplayCapture.readLocalVersion
        altered[2] = 0x01
        altered.append(0x00)
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(HCIPacket(type: .command, payload: altered))
        }
        guard case .replay(let mismatch)? = error else {
            Issue.record("expected a replay mismatch, got \(String(describing: error))")
            return
        }
        #expect(mismatch.reason == .differentBytes)
        #expect(mismatch.recordIndex == 2, "the Read Local Version Information command is record 2")
        #expect(mismatch.expected?.h4Bytes == [0x01] + ReplayCapture.readLocalVersion)
        #expect(mismatch.actual?.h4Bytes == [0x01] + altered)
        #expect(mismatch.firstDifference == 3)
        #expect(mismatch.description.contains("record 2"))
        #expect(mismatch.description.contains("expected 01 01 10 00; actual 01 01 10 01 00"))
        #expect(mismatch.diff == "expected: 01 01 10 00\nactual:   01 01 10 01 00\n                   ^^ ^^\n")
        await reader.value
        #expect(await log.packets.map { Array($0.payload) } == [ReplayCapture.resetComplete])
        #expect(await log.endError == .replay(mismatch), "the host waiting on inbound sees the mismatch")
        await #expect(throws: ReplayMismatch.self) { try await transport.verify() }
        await #expect(throws: TransportError.replay(mismatch)) {
            try await transport.send(HCIPacket(type: .command, payload: ReplayCapture.readBufferSize))
        }
    }

    @Test("a command the capture holds no more of fails as unexpected, naming the next packet the capture expects")
    func unexpectedPacket() async throws {
        let transport = ReplayTransport(script: try ReplayCapture.bringUp.script)
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(HCIPacket(type: .command, payload: [0x05, 0x20, 0x06, 1, 2, 3, 4, 5, 0xC6]))
        }
        guard case .replay(let mismatch)? = error else {
            Issue.record("expected a replay mismatch, got \(String(describing: error))")
            return
        }
        #expect(mismatch.reason == .unexpectedPacket)
        #expect(mismatch.recordIndex == 0)
        #expect(mismatch.expected?.payload.elementsEqual(ReplayCapture.reset) == true)
    }

    @Test("commands keep their order per opcode and ACL per handle; different kinds may interleave")
    func orderPerOpcodeAndHandle() async throws {
        var capture = ReplayCapture()
        capture.command(ReplayCapture.reset)
        capture.acl([0x40, 0x00, 0x01, 0x00, 0xAA], .hostToController)
        capture.acl([0x41, 0x00, 0x01, 0x00, 0xBB], .hostToController)
        capture.event(ReplayCapture.resetComplete)
        let transport = ReplayTransport(script: try capture.script)
        try await transport.send(HCIPacket(type: .acl, payload: [0x41, 0x00, 0x01, 0x00, 0xBB]))
        try await transport.send(HCIPacket(type: .acl, payload: [0x40, 0x00, 0x01, 0x00, 0xAA]))
        #expect(await transport.deliveredCount == 0, "the event waits for every host packet before it")
        try await transport.send(HCIPacket(type: .command, payload: ReplayCapture.reset))
        #expect(await transport.deliveredCount == 1)
        try await transport.verify()

        var twoOnOneHandle = ReplayCapture()
        twoOnOneHandle.acl([0x40, 0x00, 0x01, 0x00, 0x01], .hostToController)
        twoOnOneHandle.acl([0x40, 0x00, 0x01, 0x00, 0x02], .hostToController)
        let strictOrder = ReplayTransport(script: try twoOnOneHandle.script)
        await #expect(throws: TransportError.self, "the second packet of a handle cannot come first") {
            try await strictOrder.send(HCIPacket(type: .acl, payload: [0x40, 0x00, 0x01, 0x00, 0x02]))
        }
    }

    @Test("strict mode: closing with capture packets never sent fails verify; lenient mode accepts it")
    func strictCloseReportsUnsentPackets() async throws {
        let strict = ReplayTransport(script: try ReplayCapture.bringUp.script, options: .init(strict: true))
        try await strict.send(HCIPacket(type: .command, payload: ReplayCapture.reset))
        await strict.close()
        let failure = try #require(await strict.failure)
        #expect(failure.reason == .unsentPackets(count: 2))
        #expect(failure.recordIndex == 2)
        #expect(failure.expected?.payload.elementsEqual(ReplayCapture.readLocalVersion) == true)
        await #expect(throws: failure) { try await strict.verify() }
        await #expect(throws: TransportError.closed) {
            try await strict.send(HCIPacket(type: .command, payload: ReplayCapture.readLocalVersion))
        }

        let lenient = ReplayTransport(script: try ReplayCapture.bringUp.script)
        try await lenient.send(HCIPacket(type: .command, payload: ReplayCapture.reset))
        await lenient.close()
        try await lenient.verify()
        #expect(await lenient.unsentPackets.map(\.recordIndex) == [2, 4])
    }

    @Test("with capture pacing, released packets keep the capture's spacing on the clock")
    func capturePace() async throws {
        var capture = ReplayCapture()
        capture.event(ReplayCapture.resetComplete)
        capture.event(ReplayCapture.readLocalVersionComplete, after: 10_000)
        capture.event(ReplayCapture.readBufferSizeComplete, after: 20_000)
        let clock = TestClock()
        let transport = ReplayTransport(script: try capture.script, options: .init(pacing: .capturePace(clock)))
        let log = InboundLog()
        let reader = Task { await log.drain(transport) }
        await clock.waitForSleepers(count: 1)
        #expect(await transport.deliveredCount == 1)
        await clock.advance(by: .microseconds(9_999))
        #expect(await transport.deliveredCount == 1, "not before its 10 ms offset")
        await clock.advance(by: .microseconds(1))
        await clock.waitForSleepers(count: 1)
        #expect(await transport.deliveredCount == 2)
        await clock.advance(by: .milliseconds(20))
        await reader.value
        #expect(await log.packets.count == 3)
        #expect(await log.endedCleanly)
    }

    @Test("replaying a real capture in its own order releases every controller packet, byte for byte, twice alike",
          arguments: ["horizon_treadmill_notify.btsnoop_hci.log", "bluez_monitor_btvirt.btsnoop", "pongbot_gatt_rich.btsnoop_hci.log.last"])
    func realCaptureReplaysDeterministically(name: String) async throws {
        let bytes = try [UInt8](Data(contentsOf: ReplayFixtures.captures.appendingPathComponent(name)))
        let (records, readError) = CaptureReader.readAll(bytes)
        #expect(readError == nil)
        let expected = records.compactMap { $0.direction == .controllerToHost ? $0.packet : nil }
        var runs: [[HCIPacket]] = []
        for _ in 0..<2 {
            let transport = ReplayTransport(script: ReplayScript(records: records), options: .init(strict: true))
            let log = InboundLog()
            let reader = Task { await log.drain(transport) }
            for record in records where record.direction == .hostToController {
                if let packet = record.packet { try await transport.send(packet) }
            }
            await reader.value
            await transport.close()
            try await transport.verify()
            runs.append(await log.packets)
        }
        #expect(runs[0] == expected, "\(name): delivered packets differ from the capture's")
        #expect(runs[0] == runs[1], "\(name): two replays differ")
    }
}
