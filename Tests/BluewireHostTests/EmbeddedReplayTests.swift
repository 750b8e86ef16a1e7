import BluewireCore
import BluewireHCI
import BluewireHostEngine
import BluewireSnoop
import BluewireTesting
import BluewireTransport
import Foundation
import HostTestSupport
import Testing

/// `EmbeddedReplay`: the bring-up capture Bluewire recorded with a bumble controller
/// (`Captures/bumble_host_bringup.btsnoop`, the one `ReplayHostBringUpTests` replays under a
/// `BluetoothHost`) replayed into the engine by hand. No task, no clock, no real-time wait: a host
/// that diverges is reported by the call that diverges, at the capture record it diverges at.
@Suite("Embedded replay of a capture into the host engine")
struct EmbeddedReplayTests {
    static let recordedAddress = BluetoothAddress(parsing: "C4:5A:17:00:B1:0E/random")!

    static func packets() throws -> [ReplayPacket] {
        let url = ReplayFixtures.captures.appendingPathComponent(BringUpCapture.captureName)
        return try ReplayPacket.all(captureBytes: try [UInt8](Data(contentsOf: url)))
    }

    static func replay(_ packets: [ReplayPacket], address: BluetoothAddress = recordedAddress) -> EmbeddedReplay {
        EmbeddedReplay(script: ReplayScript(packets: packets), configuration: HostEngineConfiguration(randomAddress: address))
    }

    /// Position (in `packets`) of the first host command with `opcode`.
    static func command(_ opcode: UInt16, in packets: [ReplayPacket]) throws -> Int {
        try #require(packets.firstIndex {
            $0.direction == .hostToController && $0.packet.type == .command
                && $0.packet.payload.prefix(2).elementsEqual([UInt8(opcode & 0xFF), UInt8(opcode >> 8)])
        }, "the capture has command \(opcode)")
    }

    @Test("the bring-up replays byte for byte: every host packet matched, every controller packet fed, start completes with the capture's values")
    func bringUpReplays() throws {
        let packets = try Self.packets()
        var replay = Self.replay(packets)
        let start = try replay.perform(.start)
        try replay.finish()
        let exhausted = replay.isExhausted
        #expect(exhausted)
        #expect(replay.script.sentCount == packets.filter { $0.direction == .hostToController }.count)
        #expect(replay.script.releasedCount == packets.filter { $0.direction == .controllerToHost }.count)
        guard case .success(.started(let info))? = replay.host.result(start) else {
            Issue.record("start completes: \(String(describing: replay.host.result(start)))")
            return
        }
        #expect(info.randomAddress == Self.recordedAddress)
        #expect(info.leACLDataPacketLength == 27)
        #expect(info.totalNumLEACLDataPackets == 64)
        // Time is the capture's: the engine's clock stands at the last packet's capture time.
        let span = try #require(packets.last).timestamp - packets[0].timestamp
        #expect(replay.host.now.microseconds - MonotonicInstant(microseconds: 1_000_000).microseconds == span)
    }

    @Test("another random address diverges at LE Set Random Address, with the bytes of both")
    func otherAddressDiverges() throws {
        let packets = try Self.packets()
        let setRandomAddress = try Self.command(0x2005, in: packets)
        let other = BluetoothAddress.randomStatic(0x0102_0304_0506)
        var replay = Self.replay(packets, address: other)
        #expect(throws: EmbeddedReplayDivergence.self) { try replay.perform(.start) }
        do {
            var again = Self.replay(packets, address: other)
            try again.perform(.start)
        } catch {
            guard case .mismatch(let mismatch) = error else {
                Issue.record("expected a mismatch, got \(error)")
                return
            }
            #expect(mismatch.reason == .differentBytes)
            #expect(mismatch.recordIndex == packets[setRandomAddress].recordIndex)
            #expect(mismatch.actual?.payload.suffix(6).elementsEqual(other.littleEndianBytes) == true)
        }
    }

    @Test("a capture whose host packet was tampered with diverges at exactly that record")
    func tamperedHostPacketDiverges() throws {
        var packets = try Self.packets()
        let eventMask = try Self.command(0x0C01, in: packets)
        var bytes = Array(packets[eventMask].packet.payload)
        bytes[bytes.count - 1] ^= 0x01
        packets[eventMask].packet = HCIPacket(type: .command, payload: bytes)
        var replay = Self.replay(packets)
        do {
            try replay.perform(.start)
            Issue.record("the tampered capture replayed")
        } catch {
            #expect(error.recordIndex == packets[eventMask].recordIndex, "\(error)")
            if case .mismatch(let mismatch) = error { #expect(mismatch.reason == .differentBytes) } else { Issue.record("\(error)") }
        }
        // Everything before it matched.
        #expect(replay.script.sentCount == packets[..<eventMask].filter { $0.direction == .hostToController }.count)
    }

    @Test("a controller that refuses Reset: start fails, the host sends nothing more, and finish() names the capture's next command at once")
    func refusedResetLeavesTheHostSilent() throws {
        var packets = try Self.packets()
        let reset = try Self.command(0x0C03, in: packets)
        // Reset's Command Complete: 0e 04 <credits> 03 0c <status>.
        let complete = try #require(packets[(reset + 1)...].firstIndex {
            $0.direction == .controllerToHost && $0.packet.payload.prefix(5).dropFirst(3).elementsEqual([0x03, 0x0C])
        })
        var bytes = Array(packets[complete].packet.payload)
        bytes[5] = 0x1F  // Unspecified Error
        packets[complete].packet = HCIPacket(type: .event, payload: bytes)
        let next = try #require(packets[(complete + 1)...].first { $0.direction == .hostToController })

        var replay = Self.replay(packets)
        let start = try replay.perform(.start)
        guard case .failure? = replay.host.result(start) else {
            Issue.record("start fails on a refused Reset: \(String(describing: replay.host.result(start)))")
            return
        }
        #expect(throws: EmbeddedReplayDivergence.hostSilent(expected: next)) { try replay.finish() }
        #expect(replay.script.sentCount == 1, "only Reset went out")
    }
}

/// `EmbeddedReplay` moving time by itself: `Captures/bumble_scan_duration.btsnoop` is `bluewire scan
/// --duration 2` against a bumble advertiser. The engine's scan timer must fire exactly when the
/// recording host's did relative to the capture, with no request from the test.
@Suite("Embedded replay of a timed scan")
struct EmbeddedReplayScanTests {
    static let recordedAddress = BluetoothAddress(parsing: "C4:5A:17:00:B1:10/random")!

    static func packets() throws -> [ReplayPacket] {
        let url = ReplayFixtures.captures.appendingPathComponent("bumble_scan_duration.btsnoop")
        return try ReplayPacket.all(captureBytes: try [UInt8](Data(contentsOf: url)))
    }

    /// Positions of the two LE Set Scan Enable commands (on, off).
    static func scanEnables(_ packets: [ReplayPacket]) -> [Int] {
        packets.indices.filter {
            packets[$0].direction == .hostToController && packets[$0].packet.payload.prefix(2).elementsEqual([0x0C, 0x20])
        }
    }

    static func replayScan(_ packets: [ReplayPacket]) throws -> (EmbeddedReplay, ReplayPacket?) {
        var replay = EmbeddedReplay(script: ReplayScript(packets: packets), configuration: HostEngineConfiguration(randomAddress: recordedAddress))
        try replay.perform(.start)
        try replay.perform(.startScan(ScanParameters(active: true), filter: AdvertisingFilter(), duration: .seconds(2)))
        return (replay, try replay.run())
    }

    @Test("the scan's two seconds run out in capture time: the engine stops the scan where the recording did, and reports what it saw")
    func durationFiresInCaptureTime() throws {
        let packets = try Self.packets()
        let enables = Self.scanEnables(packets)
        try #require(enables.count == 2)
        let (replay, awaited) = try Self.replayScan(packets)
        // Everything up to and including the stop was matched; what follows is the recording
        // command's own business (nil, or a packet the test did not ask for).
        #expect(replay.script.sentCount == packets[...enables[1]].filter { $0.direction == .hostToController }.count)
        if let awaited { #expect(awaited.recordIndex > packets[enables[1]].recordIndex) }
        #expect(replay.host.engine.scanState == .initial, "the scan ended: \(replay.host.engine.scanState)")
        var host = replay.host
        let events = host.takeEvents()
        let found = events.compactMap { event -> DiscoveredDevice? in
            if case .deviceFound(let device) = event { device } else { nil }
        }
        #expect(found.contains { $0.address.value == 0xC9428ADD1478 }, "the advertiser was seen: \(events)")
        #expect(events.contains { if case .scanStopped = $0 { true } else { false } }, "the scan reported its end")
    }

    @Test("a capture whose stop came before the duration was over: the host is idle with its timer later, reported at that record at once")
    func earlyStopDiverges() throws {
        var packets = try Self.packets()
        let enables = Self.scanEnables(packets)
        try #require(enables.count == 2)
        // The stop and everything after it recorded 1 s earlier, before the 2 s were over.
        for index in enables[1]..<packets.count { packets[index].timestamp -= 1_000_000 }
        var (replay, awaited) = try Self.replayScan(packets)
        #expect(awaited?.recordIndex == packets[enables[1]].recordIndex, "the replay waits for the stop")
        #expect(throws: EmbeddedReplayDivergence.hostSilent(expected: packets[enables[1]])) { try replay.finish() }
        #expect(replay.host.engine.scanState != .initial, "the scan still runs")
    }
}
