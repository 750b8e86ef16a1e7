import Bluewire
import BluewireCore
import BluewireTesting
import PeerTestSupport
import Testing

@Suite("TestClock")
struct TestClockTests {
    @Test("actions run in deadline order, ties in scheduling order, each seeing its own deadline as now")
    func actionsRunInDeadlineOrder() {
        let clock = TestClock()
        let log = SendableRecorder<String>()
        clock.schedule(at: MonotonicInstant(microseconds: 300)) { log.append("c@\(clock.monotonicNow.microseconds)") }
        clock.schedule(at: MonotonicInstant(microseconds: 100)) { log.append("a@\(clock.monotonicNow.microseconds)") }
        clock.schedule(at: MonotonicInstant(microseconds: 300)) { log.append("d@\(clock.monotonicNow.microseconds)") }
        clock.schedule(after: .microseconds(200)) { log.append("b@\(clock.monotonicNow.microseconds)") }
        clock.advance(by: .microseconds(250))
        #expect(log.values == ["a@100", "b@200"])
        #expect(clock.monotonicNow == MonotonicInstant(microseconds: 250))
        clock.advance(by: .microseconds(50))
        #expect(log.values == ["a@100", "b@200", "c@300", "d@300"])
        #expect(clock.pendingCount == 0)
    }

    @Test("actions scheduled by a running action run in the same advance when they fall due")
    func actionsScheduledDuringAdvanceRun() {
        let clock = TestClock()
        let log = SendableRecorder<Int64>()
        clock.schedule(after: .milliseconds(10)) {
            log.append(clock.monotonicNow.microseconds)
            clock.schedule(after: .milliseconds(10)) { log.append(clock.monotonicNow.microseconds) }
            clock.schedule(after: .milliseconds(100)) { log.append(clock.monotonicNow.microseconds) }
        }
        clock.advance(by: .milliseconds(50))
        #expect(log.values == [10_000, 20_000])
        #expect(clock.nextDeadline == MonotonicInstant(microseconds: 110_000))
        // The clock owns its pending actions and they capture the clock: run the last one so the test
        // leaves no clock ↔ action cycle behind (LeakSanitizer reports one).
        clock.advance(by: .milliseconds(60))
        #expect(log.values == [10_000, 20_000, 110_000])
        #expect(clock.pendingCount == 0)
    }

    @Test("a cancelled action never runs and a deadline in the past runs on the next advance")
    func cancelAndPastDeadlines() {
        let clock = TestClock(start: MonotonicInstant(microseconds: 1_000))
        let log = SendableRecorder<String>()
        let token = clock.schedule(after: .seconds(1)) { log.append("cancelled") }
        clock.schedule(at: .zero) { log.append("late") }
        #expect(log.values.isEmpty, "scheduling never runs an action inline")
        #expect(clock.cancel(token))
        #expect(!clock.cancel(token))
        clock.advance(by: .zero)
        clock.advance(by: .seconds(2))
        #expect(log.values == ["late"])
    }

    @Test("runUntilIdle stops at its limit even when work is periodic")
    func runUntilIdleStopsAtLimit() {
        let clock = TestClock()
        let ticks = SendableRecorder<Int64>()
        // Periodic well past the limit, then it stops, so the test can drain the clock: pending actions
        // capture the clock that owns them, and a tick left pending would be a leaked cycle.
        @Sendable func tick() {
            ticks.append(clock.monotonicNow.microseconds)
            if ticks.values.count < 6 { clock.schedule(after: .milliseconds(100), tick) }
        }
        clock.schedule(after: .milliseconds(100), tick)
        let steps = clock.runUntilIdle(notAfter: MonotonicInstant(microseconds: 350_000))
        #expect(steps == 3)
        #expect(ticks.values == [100_000, 200_000, 300_000])
        #expect(clock.runUntilIdle(notAfter: MonotonicInstant(microseconds: 10_000_000)) == 3, "stops once idle")
        #expect(ticks.values.last == 600_000)
        #expect(clock.pendingCount == 0)
    }

    @Test("a task sleeping on the clock resumes only when time is advanced past its deadline")
    func sleeperResumesOnAdvance() async throws {
        let clock = TestClock()
        let woke = SendableRecorder<Int64>()
        let task = Task {
            try await clock.sleep(for: .seconds(30))
            woke.append(clock.monotonicNow.microseconds)
        }
        await clock.waitForSleepers(count: 1)
        await clock.advance(by: .seconds(29))
        #expect(woke.values.isEmpty)
        await clock.advance(by: .seconds(1))
        try await task.value
        #expect(woke.values == [30_000_000])
    }

    @Test("the HostClock conformance sleeps in virtual time through the Host's clock protocol")
    func hostClockProtocolSleep() async throws {
        let clock = TestClock()
        func waitTwice<C: HostClock>(on clock: C) async throws {
            try await clock.sleep(until: clock.now + .milliseconds(500))
            try await clock.sleep(until: clock.now + .milliseconds(500))
        }
        let task = Task { try await waitTwice(on: clock) }
        await clock.waitForSleepers()
        await clock.advance(by: .milliseconds(500))
        await clock.waitForSleepers()
        #expect(clock.now == MonotonicInstant(microseconds: 500_000))
        #expect(clock.nextDeadline == MonotonicInstant(microseconds: 1_000_000))
        await clock.advance(by: .milliseconds(500))
        try await task.value
        #expect(clock.monotonicNow == MonotonicInstant(microseconds: 1_000_000))
    }

    @Test("cancelling a sleeping task throws CancellationError and removes the sleeper")
    func cancelledSleeperThrows() async {
        let clock = TestClock()
        let task = Task { try await clock.sleep(for: .seconds(5)) }
        await clock.waitForSleepers()
        task.cancel()
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(clock.sleeperCount == 0)
    }
}
