import BluewireCore
import Synchronization

/// Deterministic virtual time for tests: nothing happens until the test moves the clock.
///
/// Like SwiftNIO's `EmbeddedEventLoop.advanceTime(by:)`, a test schedules work (or lets the code under test
/// schedule it) and then advances time by hand. Actions due by the new time run in deadline order, ties in
/// the order they were scheduled, each seeing `monotonicNow` equal to its own deadline; so a 30 s ATT
/// timeout is tested in microseconds and two runs with the same inputs produce the same outputs.
///
/// The clock is also the Host's clock (`HostClock`, see `VirtualClock+HostClock.swift`): async code that sleeps
/// on it is resumed when a test advances past its deadline (`VirtualClock+Sleep.swift`), so a Host, a
/// `TimeoutOperation` and a paced replay all take it as their injected clock. It is Bluewire's only
/// test clock; it is deliberately not a Swift `Clock`, because the Host counts time in `MonotonicInstant`
/// microseconds and one protocol (`HostClock`) is all the code under test reads.
///
/// Scheduled actions run on the thread that calls `advance`, outside the clock's lock, so they may schedule
/// or cancel further actions.
public final class VirtualClock: Sendable {
    /// Identifies a scheduled action, for `cancel(_:)`.
    public struct Token: Hashable, Sendable {
        let sequence: UInt64
    }

    enum Work: Sendable {
        case action(@Sendable () -> Void)
        case sleeper(CheckedContinuation<Void, any Error>)
    }

    struct Entry: Sendable {
        var deadline: MonotonicInstant
        var sequence: UInt64
        var work: Work
    }

    struct State: Sendable {
        var now: MonotonicInstant
        var nextSequence: UInt64 = 0
        /// Sorted by (deadline, sequence): the order in which entries run.
        var entries: [Entry] = []
        /// Sleepers cancelled before they registered their continuation.
        var cancelledSleepers: Set<UInt64> = []
        /// Async `advance` calls waiting for the sleeper they resumed to run again, by sleeper sequence.
        var wakeAcknowledgements: [UInt64: CheckedContinuation<Void, Never>] = [:]
        /// Tasks waiting in `waitForSleepers(count:)`.
        var sleeperWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        /// Called whenever a sleeper registers or leaves (`onSleepersChanged`).
        var sleepersChanged: (@Sendable () -> Void)?

        mutating func takeSequence() -> UInt64 {
            defer { nextSequence &+= 1 }
            return nextSequence
        }

        mutating func insert(_ entry: Entry) {
            var low = 0
            var high = entries.count
            while low < high {
                let mid = (low + high) / 2
                let other = entries[mid]
                if (other.deadline, other.sequence) < (entry.deadline, entry.sequence) {
                    low = mid + 1
                } else {
                    high = mid
                }
            }
            entries.insert(entry, at: low)
        }

        var sleeperCount: Int {
            entries.reduce(0) { count, entry in
                if case .sleeper = entry.work { return count + 1 }
                return count
            }
        }

        /// Waiters whose sleeper count is now reached, removed from the list.
        mutating func satisfiedWaiters() -> [CheckedContinuation<Void, Never>] {
            let count = sleeperCount
            var ready: [CheckedContinuation<Void, Never>] = []
            sleeperWaiters.removeAll { waiter in
                guard count >= waiter.count else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
    }

    let state: Mutex<State>

    /// A clock whose current time is `start` (virtual time zero by default).
    public init(start: MonotonicInstant = .zero) {
        state = Mutex(State(now: start))
    }

    /// The current virtual time.
    public var monotonicNow: MonotonicInstant {
        state.withLock { $0.now }
    }

    /// The deadline of the earliest scheduled action or sleeper, if any.
    public var nextDeadline: MonotonicInstant? {
        state.withLock { $0.entries.first?.deadline }
    }

    /// How many actions and sleepers are waiting for time to advance.
    public var pendingCount: Int {
        state.withLock { $0.entries.count }
    }

    /// Runs `action` when the clock reaches `deadline`. A deadline at or before now runs on the next
    /// `advance` (even `advance(by: .zero)`), never from inside this call.
    @discardableResult
    public func schedule(at deadline: MonotonicInstant, _ action: @escaping @Sendable () -> Void) -> Token {
        state.withLock { state in
            let sequence = state.takeSequence()
            state.insert(Entry(deadline: deadline, sequence: sequence, work: .action(action)))
            return Token(sequence: sequence)
        }
    }

    /// Runs `action` after `delay` of virtual time.
    @discardableResult
    public func schedule(after delay: TimeSpan, _ action: @escaping @Sendable () -> Void) -> Token {
        state.withLock { state in
            let sequence = state.takeSequence()
            let entry = Entry(deadline: state.now + delay, sequence: sequence, work: .action(action))
            state.insert(entry)
            return Token(sequence: sequence)
        }
    }

    /// Cancels a scheduled action; returns whether it was still pending.
    @discardableResult
    public func cancel(_ token: Token) -> Bool {
        state.withLock { state in
            guard let index = state.entries.firstIndex(where: { $0.sequence == token.sequence }) else { return false }
            state.entries.remove(at: index)
            return true
        }
    }

    /// Moves time forward by `span`, running every action due by then in order.
    public func advance(by span: TimeSpan) {
        advance(to: monotonicNow + span)
    }

    /// Moves time forward to `target` (never backwards), running every action due by then in order.
    /// Actions scheduled by running actions also run if they fall due by `target`.
    public func advance(to target: MonotonicInstant) {
        while let entry = popDue(notAfter: target) {
            run(entry)
        }
        settleTime(at: target)
    }

    /// Advances to the next scheduled deadline and runs what is due there; returns false if nothing is
    /// scheduled. Handy to step a periodic process one event at a time.
    @discardableResult
    public func advanceToNextDeadline() -> Bool {
        guard let deadline = nextDeadline else { return false }
        advance(to: max(deadline, monotonicNow))
        return true
    }

    /// Advances from deadline to deadline until nothing is scheduled or `limit` is reached (periodic
    /// work such as advertising never runs out), returning the number of deadlines visited.
    @discardableResult
    public func runUntilIdle(notAfter limit: MonotonicInstant) -> Int {
        var steps = 0
        while let deadline = nextDeadline, deadline <= limit {
            advance(to: max(deadline, monotonicNow))
            steps += 1
        }
        return steps
    }

    // MARK: internals shared with the async side

    /// Removes and returns the earliest entry due by `target`, moving `now` to its deadline.
    func popDue(notAfter target: MonotonicInstant) -> Entry? {
        state.withLock { state in
            guard let first = state.entries.first, first.deadline <= target else { return nil }
            state.entries.removeFirst()
            if first.deadline > state.now { state.now = first.deadline }
            return first
        }
    }

    func settleTime(at target: MonotonicInstant) {
        state.withLock { state in
            if target > state.now { state.now = target }
        }
    }

    func run(_ entry: Entry) {
        switch entry.work {
        case .action(let action): action()
        case .sleeper(let continuation): continuation.resume()
        }
    }
}
