@_spi(Testing) import Bluewire
import BluewireCore
import BluewireHostEngine
import BluewireTesting
import Synchronization
import Testing

/// Closing the host a `RemotePeripheral` reaches its peer through: whatever the peripheral had under
/// way (a connect, a link's watcher, the idle timer, event sequences) ends, and nothing is left asleep
/// on the host's clock. LeakSanitizer found a connect that never resumed after both hosts had closed,
/// and an idle timer outlived its link. The time limit turns a peripheral that never hears of the
/// close (its events never end) into a failure instead of a hang.
@Suite("RemotePeripheral: a closed host leaves nothing of the peripheral pending", .timeLimit(.minutes(1)))
struct RemotePeripheralCloseTests {
    @Test("closing the host under a link with the idle timer armed ends the timer, the link's watcher and the events")
    func closeWithTheIdleTimerArmed() async throws {
        let fixture = try await RemotePeripheralTests.Fixture()
        let remote = fixture.remote
        await remote.attachAutoConnect(idleDisconnect: .seconds(5))
        let events = await remote.events()
        #expect(try await remote.read(RemotePeripheralTests.value) == [0x42])
        let before = await remote.pendingWork
        #expect(before.idleTimerArmed && before.linkWatchers == 1, "\(before)")
        #expect(fixture.link.clock.sleeperCount >= 1, "the idle timer sleeps on the host's clock")

        await fixture.centralHost.close()
        // The sequence ends once the peripheral heard of the close (the end of its link).
        var received: [RemotePeripheralEvent] = []
        for await event in events { received.append(event) }
        #expect(received.contains { $0.isDisconnected }, "\(received)")
        let after = await remote.pendingWork
        #expect(after == .none, "\(after)")
        #expect(await fixture.centralHost.pendingWork == EngineHost.PendingWork.none)
        await fixture.peripheralHost.close()
        #expect(fixture.link.clock.sleeperCount == 0, "a task still asleep on the clock after both hosts closed")
        // Nothing starts again: a read after the close fails at once.
        await #expect(throws: RemotePeripheralError.self) { try await remote.read(RemotePeripheralTests.value) }
        #expect(fixture.link.clock.sleeperCount == 0)
        #expect(await remote.pendingWork == RemotePeripheral.PendingWork.none)
    }

    @Test("a connect under way when the host closes fails as not running; the peripheral's events end, nothing is pending")
    func connectUnderWayAtClose() async throws {
        let fixture = try await RemotePeripheralTests.Fixture()
        // A peer nobody plays: the attempt waits until the host closes.
        let absent = BluetoothAddress.randomStatic(0x0000_0000_0BAD)
        let remote = RemotePeripheral(host: fixture.centralHost, peer: absent)
        await remote.attachAutoConnect()
        let events = await remote.events()
        let transitions = await fixture.centralHost.transitions(of: absent)
        let read = Task { () throws(RemotePeripheralError) -> [UInt8] in try await remote.read(RemotePeripheralTests.value) }
        // The first transition of the absent peer's machine is the connect's: the request is pending.
        for await _ in transitions { break }
        let during = await remote.pendingWork
        #expect(during.connects == 1 && during.operations == 1, "\(during)")
        let hostDuring = await fixture.centralHost.pendingWork
        #expect(hostDuring.requests == 1, "\(hostDuring)")

        await fixture.centralHost.close()
        let result = await read.result
        #expect(throws: RemotePeripheralError.connectionFailed(.notRunning)) { try result.get() }
        var received: [RemotePeripheralEvent] = []
        for await event in events { received.append(event) }
        #expect(received.first == .connecting, "\(received)")
        let after = await remote.pendingWork
        #expect(after == .none, "\(after)")
        #expect(await fixture.centralHost.pendingWork == EngineHost.PendingWork.none)
        await fixture.close()
        #expect(fixture.link.clock.sleeperCount == 0)
    }

    @Test("a peripheral with auto-connect is released once the application drops it (its queue's worker ends with it)")
    func autoConnectKeepsNoCycle() async throws {
        let fixture = try await RemotePeripheralTests.Fixture()
        weak var released: RemotePeripheral?
        do {
            let remote = RemotePeripheral(host: fixture.centralHost, peer: fixture.remote.peer)
            await remote.attachAutoConnect(idleDisconnect: .seconds(5))
            let events = await remote.events()
            #expect(try await remote.read(RemotePeripheralTests.value) == [0x42])
            released = remote
            await fixture.centralHost.close()
            for await _ in events {}
        }
        await fixture.close()
        // The link's watcher ends a few hops after the events (bounded: a cycle never lets go).
        for _ in 0..<1_000 where released != nil { await Task.yield() }
        #expect(released == nil, "the peripheral (and its queue's parked worker) outlived every reference to it")
    }

    @Test("a peripheral released with no link ends its event sequence: its consumer's task ends, it is not left waiting")
    func releasedWithoutALinkEndsItsEvents() async throws {
        let fixture = try await RemotePeripheralTests.Fixture()
        weak var released: RemotePeripheral?
        let consumer: Task<Int, Never>
        let loopEnded = LoopEndFlag()
        do {
            let remote = RemotePeripheral(host: fixture.centralHost, peer: fixture.remote.peer)
            let events = await remote.events()
            consumer = Task {
                var count = 0
                for await _ in events { count += 1 }
                loopEnded.set()
                return count
            }
            #expect(await remote.pendingWork.eventStreams == 1)
            released = remote
        }
        for _ in 0..<1_000 where released != nil { await Task.yield() }
        #expect(released == nil)
        // The consumer's loop ends (before, it waited for ever). Bounded by a count of scheduling
        // turns, not by time: a loop still waiting fails here, and is then cancelled (which ends an
        // AsyncStream's iteration) so that the test ends instead of hanging.
        for _ in 0..<1_000 where !loopEnded.isSet { await Task.yield() }
        #expect(loopEnded.isSet, "the consumer still waits for events of a released peripheral")
        if !loopEnded.isSet { consumer.cancel() }
        #expect(await consumer.value == 0, "no event came: the sequence ended with the peripheral")
        await fixture.close()
    }

    @Test("a peripheral whose events are being read is released once the application drops it")
    func eventsKeepNoCycle() async throws {
        let fixture = try await RemotePeripheralTests.Fixture()
        weak var released: RemotePeripheral?
        let events: AsyncStream<RemotePeripheralEvent>
        do {
            let remote = RemotePeripheral(host: fixture.centralHost, peer: fixture.remote.peer)
            events = await remote.events()
            released = remote
        }
        for _ in 0..<1_000 where released != nil { await Task.yield() }
        #expect(released == nil, "the peripheral outlived every reference to it: its event continuation held it")
        _ = events
        await fixture.close()
    }
}

/// Set by a task when its loop is over, so a test can tell an ended loop from one still waiting
/// without awaiting it.
private final class LoopEndFlag: Sendable {
    private let ended = Atomic<Bool>(false)
    func set() { ended.store(true, ordering: .releasing) }
    var isSet: Bool { ended.load(ordering: .acquiring) }
}
