@_spi(Testing) import Bluewire
import Synchronization
import Testing

/// What a test bench's waits (`settle`) wake on: everything their conditions read pokes it when it
/// changes, so a wait re-checks its condition exactly then, never on a timer.
///
/// Who pokes: the benches' transports (`ObservedVirtualTransport`) at every packet the controller
/// delivers, every packet the host takes, acts on, queues or hands off
/// (`HostActivityObservingTransport`); each host, whenever it re-checks its counts
/// (`watchDiagnostics`: every drain of its engine, every notification route added or removed, every
/// GATT client session freed); the virtual clock, whenever a sleeper comes or goes
/// (`TestClock.onSleepersChanged`); and the flags the tests' own tasks set (`Completion`, the
/// link-loss test's `Attempt`).
final class BenchSignal: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var waiters: [(after: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
        /// Tasks in `waitForWaiter()`.
        var waiterWatchers: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Counts pokes: a wait that read its condition at generation `g` sleeps only while it is still `g`.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Something a condition may read has changed: wakes every waiter.
    func poke() {
        let woken = state.withLock { state in
            state.generation &+= 1
            defer { state.waiters.removeAll() }
            return state.waiters.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Returns at the first poke after `generation` (at once if there was one already).
    func wait(after generation: UInt64) async {
        await withCheckedContinuation { continuation in
            let (now, watchers) = state.withLock { state in
                if state.generation != generation { return (true, [CheckedContinuation<Void, Never>]()) }
                state.waiters.append((generation, continuation))
                defer { state.waiterWatchers.removeAll() }
                return (false, state.waiterWatchers)
            }
            if now { continuation.resume() }
            for watcher in watchers { watcher.resume() }
        }
    }

    /// Returns once a task is asleep in `wait(after:)` (at once if one is): a test that must act only
    /// after a settle has found its condition false and gone to sleep.
    func waitForWaiter() async {
        await withCheckedContinuation { (watcher: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                if !state.waiters.isEmpty { return true }
                state.waiterWatchers.append(watcher)
                return false
            }
            if now { watcher.resume() }
        }
    }

    /// Pokes whenever `host` re-checks its counts, until it closes: its request, command and ACL
    /// counts change only in a drain of its engine, and each drain re-checks them
    /// (`BluetoothHost.waitForDiagnostics`). The condition never holds, so the watch lasts the host's
    /// life.
    func watchDiagnostics(of host: BluetoothHost) {
        Task { [self] in _ = await host.waitForDiagnostics { [self] _ in poke(); return false } }
    }
}

/// The most a bench's wait may take in real time before it fails the test. Not a poll and not an
/// idle guess: every wait wakes on its signal; this only turns a condition that never holds (a bug)
/// into a failure naming it instead of a test that hangs.
let benchWaitLimit = Duration.seconds(10)

/// Waits, without moving virtual time, until `condition` holds, re-checking it at each poke of
/// `signal`. Returns false if `benchWaitLimit` passes first, without a last check: a condition that
/// came true with no poke is a signal missing, and fails as such.
func settleOrReport(_ signal: BenchSignal, _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + benchWaitLimit
    let limit = Task {
        try? await Task.sleep(until: deadline)
        signal.poke()
    }
    defer { limit.cancel() }
    while true {
        let generation = signal.generation
        if await condition() { return true }
        await signal.wait(after: generation)
        if ContinuousClock.now >= deadline { return false }
    }
}

/// `settleOrReport`, recording an issue naming `what` (and throwing) if the condition never holds.
func settle(
    _ what: String, on signal: BenchSignal, sourceLocation: SourceLocation = #_sourceLocation,
    until condition: () async -> Bool
) async throws {
    guard await settleOrReport(signal, condition) else {
        Issue.record("never happened: \(what)", sourceLocation: sourceLocation)
        throw CancellationError()
    }
}
