import Bluewire
import BluewireCore
import BluewireTesting
import PeerTestSupport
import Testing

/// The one test clock's sleepers: what the Host's timers, `TimeoutOperation` and a paced replay rely on.
@Suite("TestClock sleepers")
struct TestClockSleeperTests {
    static func at(_ milliseconds: Int64) -> MonotonicInstant { MonotonicInstant(microseconds: milliseconds * 1_000) }

    @Test("sleepers registered out of order resume in deadline order, one advance at a time")
    func deadlineOrderStepwise() async throws {
        let clock = TestClock()
        let late = Task { try await clock.sleep(until: Self.at(30)) }
        let early = Task { try await clock.sleep(until: Self.at(10)) }
        let middle = Task { try await clock.sleep(until: Self.at(20)) }
        await clock.waitForSleepers(count: 3)
        #expect(clock.nextDeadline == Self.at(10))

        await clock.advance(to: Self.at(15))
        try await early.value
        #expect(clock.sleeperCount == 2, "only the 10 ms sleeper is due at 15 ms")
        await clock.advance(to: Self.at(25))
        try await middle.value
        #expect(clock.sleeperCount == 1)
        #expect(clock.nextDeadline == Self.at(30))
        await clock.advance(to: Self.at(30))
        try await late.value
        #expect(clock.sleeperCount == 0)
    }

    @Test("one advance past several deadlines resumes every due sleeper in deadline order, interleaved with actions")
    func severalDeadlinesAtOnce() async throws {
        let clock = TestClock()
        let sleepers = [30, 10, 20].map { deadline in Task { try await clock.sleep(until: Self.at(Int64(deadline))) } }
        await clock.waitForSleepers(count: 3)
        // Actions run in the advancing task between sleepers: what each sees of the remaining sleepers
        // shows which ones the clock already resumed when time reached it.
        let seen = SendableRecorder<(Int64, Int)>()
        for probe: Int64 in [5, 15, 25, 35] {
            clock.schedule(at: Self.at(probe)) { seen.append((probe, clock.sleeperCount)) }
        }
        await clock.advance(to: Self.at(40))
        #expect(seen.values.map(\.0) == [5, 15, 25, 35])
        #expect(seen.values.map(\.1) == [3, 2, 1, 0], "sleepers resumed in deadline order")
        #expect(clock.now == Self.at(40))
        for sleeper in sleepers { try await sleeper.value }
    }

    @Test("a deadline already passed returns at once and registers no sleeper")
    func pastDeadline() async throws {
        let clock = TestClock(start: Self.at(100))
        try await clock.sleep(until: Self.at(100))
        try await clock.sleep(until: Self.at(50))
        #expect(clock.sleeperCount == 0)
        #expect(clock.pendingCount == 0)
    }

    @Test("cancelling one sleeper throws CancellationError for it alone; the other still waits for its deadline")
    func cancellationLeavesOthers() async throws {
        let clock = TestClock()
        let cancelled = Task { try await clock.sleep(until: Self.at(10)) }
        let kept = Task { try await clock.sleep(until: Self.at(20)) }
        await clock.waitForSleepers(count: 2)
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(clock.sleeperCount == 1)
        #expect(clock.nextDeadline == Self.at(20), "the cancelled sleeper's deadline is gone")
        await clock.advance(to: Self.at(19))
        #expect(clock.sleeperCount == 1, "not due yet")
        await clock.advance(to: Self.at(20))
        try await kept.value
        #expect(clock.sleeperCount == 0)
    }

    @Test("a task cancelled before it sleeps throws without registering")
    func cancelledBeforeSleeping() async {
        let clock = TestClock()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(until: Self.at(10))
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.pendingCount == 0)
    }

    @Test("code generic over HostClock sleeps on the TestClock and wakes at exactly its deadline")
    func genericHostClockTimers() async throws {
        let clock = TestClock()
        func timer<C: HostClock>(on clock: C, after span: TimeSpan) async throws -> MonotonicInstant {
            try await clock.sleep(until: clock.now + span)
            return clock.now
        }
        let short = Task { try await timer(on: clock, after: .seconds(1)) }
        let long = Task { try await timer(on: clock, after: .seconds(30)) }
        await clock.waitForSleepers(count: 2)
        await clock.advance(by: .seconds(1))
        #expect(try await short.value == Self.at(1_000))
        #expect(clock.sleeperCount == 1)
        await clock.advance(by: .seconds(29))
        #expect(try await long.value == Self.at(30_000))
    }

    @Test("onSleepersChanged reports each sleeper that registers, wakes or is cancelled, with the count already changed")
    func sleepersChangedReportsEveryChange() async throws {
        let clock = TestClock()
        let (changes, continuation) = AsyncStream<Int>.makeStream()
        clock.onSleepersChanged { continuation.yield(clock.sleeperCount) }
        var reports = changes.makeAsyncIterator()

        let woken = Task { try await clock.sleep(until: Self.at(10)) }
        #expect(await reports.next() == 1, "registered")
        await clock.advance(to: Self.at(10))
        try await woken.value
        #expect(await reports.next() == 0, "woken and running again")

        let cancelled = Task { try await clock.sleep(until: Self.at(20)) }
        #expect(await reports.next() == 1, "registered")
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(await reports.next() == 0, "cancelled")

        clock.onSleepersChanged(nil)
        let unreported = Task { try await clock.sleep(until: Self.at(30)) }
        await clock.waitForSleepers(count: 1)
        continuation.finish()
        #expect(await reports.next() == nil, "no report once the handler is removed")
        unreported.cancel()
    }
}
