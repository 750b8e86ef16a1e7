import Bluewire
import BluewireCore
import BluewireHCI
import BluewireSnoop
import BluewireTesting
import BluewireTransport
import Foundation
import HostTestSupport
import PeerTestSupport
import Testing

/// The replay's virtual clock: a timed scan recorded against a bumble peripheral
/// (`Captures/bumble_scan_duration.btsnoop`) replays with its timer fired in capture time, not real time.
@Suite("Replay clock")
struct ReplayClockTests {
    @Test("a scan ended by its duration replays: the clock reaches the deadline in capture time and the scan stops")
    func timedScanReplays() async throws {
        let (devices, transport) = try await ScanDurationCapture.replay(ReplayFixtures.captures.appendingPathComponent(ScanDurationCapture.captureName))
        try await transport.verify()
        #expect(await transport.isExhausted)
        #expect(!devices.isEmpty)
        #expect(devices.allSatisfy { $0.name == "Replay scanner peer" })
        #expect(transport.clock.now.microseconds >= ScanDurationCapture.duration.microseconds, "virtual time passed the scan's duration")
    }

    @Test("the clock follows the packets the host received, and an idle host's timer fires without real waiting")
    func clockFollowsTheCapture() async throws {
        var capture = ReplayCapture()
        capture.command(ReplayCapture.reset)
        capture.event(ReplayCapture.resetComplete, after: 5_000)
        capture.command(ReplayCapture.readLocalVersion)  // recorded 1 ms after the Command Complete
        let transport = ReplayTransport(script: try capture.script, options: .init(quiescence: .milliseconds(50)))
        let clock = transport.clock
        #expect(clock.now == .zero)
        var iterator = transport.inbound.makeAsyncIterator()
        try await transport.send(HCIPacket(type: .command, payload: ReplayCapture.reset))
        _ = try await iterator.next()
        #expect(clock.now == MonotonicInstant(microseconds: 5_000), "time of the Command Complete the host received")
        // A timer due before the recorded next command fires at once; the host is idle meanwhile.
        try await clock.sleep(until: MonotonicInstant(microseconds: 5_500))
        #expect(clock.now == MonotonicInstant(microseconds: 5_500))
        // One due after it fires once nothing else happens (a host that diverged times out, not hangs).
        try await clock.sleep(until: MonotonicInstant(microseconds: 2_000_000))
        #expect(clock.now == MonotonicInstant(microseconds: 2_000_000))
    }

    /// The host arms a command's timeout at the end of the drain that queued the command, before its
    /// writer task hands the command to the transport. With no real-time grace at all, a clock that
    /// counted that moment as idle would fire the timeout at once (the recording host sent its next
    /// packet, this very command, long before the deadline), and `start()` would fail with "no response".
    @Test("with no real-time grace, bring-up replays: a command on its way to the transport keeps the host busy",
          arguments: 0..<10)
    func queuedOutputKeepsTheHostBusy(run: Int) async throws {
        let url = ReplayFixtures.captures.appendingPathComponent(BringUpCapture.captureName)
        let records = try captureRecords(url)
        let transport = ReplayTransport(script: ReplayScript(records: records), options: .init(strict: true, quiescence: .zero))
        let host = BluetoothHost(
            transport: transport, configuration: HostConfiguration(randomAddress: BringUpCapture.recordedAddress, clearsControllerLeftoversAtStart: false),
            clock: transport.hostClock)
        let started: Result<ControllerInfo, HostError>
        do throws(HostError) { started = .success(try await host.start()) } catch { started = .failure(error) }
        await host.close()
        #expect(throws: Never.self, "run \(run)") { try started.get() }
        try await transport.verify()
        #expect(await transport.unsentPackets.isEmpty)
        let span = try #require(records.last).timestamp - (try #require(records.first).timestamp)
        #expect(transport.clock.now.microseconds <= span, "no timer moved time past the capture's end")
    }

    @Test("a received packet later than several timers fires them all, earliest first, at the packet's time")
    func receivedPacketPassesSeveralTimers() async throws {
        var capture = ReplayCapture()
        capture.command(ReplayCapture.reset)
        capture.event(ReplayCapture.resetComplete, after: 5_000)
        let transport = ReplayTransport(script: try capture.script)
        let clock = transport.clock
        try await transport.send(HCIPacket(type: .command, payload: ReplayCapture.reset))
        // The replay waits for no host packet: nothing moves time until the host takes the event.
        let woke = SendableRecorder<Int64>()
        let late = Task { try await clock.sleep(until: MonotonicInstant(microseconds: 3_000)); woke.append(3_000) }
        let early = Task { try await clock.sleep(until: MonotonicInstant(microseconds: 1_000)); woke.append(1_000) }
        var iterator = transport.inbound.makeAsyncIterator()
        // Wait until both timers are asleep: each registration pokes the replay, which must not move time.
        await clock.waitForSleepers(count: 2)
        #expect(clock.sleeperCount == 2)
        #expect(clock.now == .zero)
        _ = try await iterator.next()
        try await early.value
        try await late.value
        #expect(Set(woke.values) == [1_000, 3_000])
        #expect(clock.now == MonotonicInstant(microseconds: 5_000), "time is the received event's, past both deadlines")
    }
}
