import Bluewire
import BluewireCore
import Synchronization

/// The virtual clock of a host-driven replay: time is the capture's, and it runs as fast as the host
/// and the capture allow.
///
/// `now` is the capture time (microseconds since the capture's first packet) of the latest packet the
/// host received or sent, so a deadline the host computes lands where the recording host's did. When
/// the replay waits for the host's next packet and the host has received everything released, the
/// host can only be waiting for a timer: the clock then jumps to the earliest sleeper's deadline, at
/// once if the recording host sent its next packet after that deadline (its timer fired first too),
/// otherwise after `quiescence` of real time without any activity (a host whose response diverged
/// from the capture then times out quickly instead of hanging).
public final class ReplayClock: HostClock, Sendable {
    struct Sleeper {
        var id: UInt64
        var deadline: MonotonicInstant
        var continuation: CheckedContinuation<Void, any Error>
    }

    struct State {
        var now = MonotonicInstant.zero
        /// Capture timestamp that counts as time zero.
        var origin: Int64?
        /// Capture timestamps of packets delivered and not yet received by the host, oldest first.
        var inFlight: [Int64] = []
        var inFlightHead = 0
        /// Whether the replay waits for a host packet, and the capture time of that packet.
        var waitingForHost = false
        var nextHostPacket: MonotonicInstant?
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
        /// Bumped on every change, so a quiescence check can tell whether anything happened meanwhile.
        var activity: UInt64 = 0
        var watchdogRunning = false
        /// Called once per idle spell: the host waits for nothing the replay or a timer can give.
        var idleHandler: (@Sendable () -> Void)?
        var idleDelay: Duration = .milliseconds(500)
        var idleWatchRunning = false
        var idleReportedAt: UInt64?

        /// Released packets the transport holds back (capture pacing) and will deliver later.
        var deliveriesPending = false

        var hostIsIdle: Bool { waitingForHost && !deliveriesPending && inFlightHead == inFlight.count }
        /// The host has received everything and waits on no timer: only something from outside (a
        /// signal) can make it act, whether or not the capture expects more from it.
        var hostIsWaitingForTheWorld: Bool { !deliveriesPending && inFlightHead == inFlight.count && sleepers.isEmpty }

        mutating func offset(_ timestamp: Int64) -> MonotonicInstant? {
            let base = origin ?? timestamp
            origin = base
            let (span, overflow) = timestamp.subtractingReportingOverflow(base)
            return overflow ? nil : MonotonicInstant(microseconds: span)
        }

        mutating func advance(to timestamp: Int64) {
            if let instant = offset(timestamp), instant > now { now = instant }
        }

        /// Sleepers due at `now`, removed.
        mutating func due() -> [CheckedContinuation<Void, any Error>] {
            var ready: [CheckedContinuation<Void, any Error>] = []
            sleepers.removeAll { sleeper in
                guard sleeper.deadline <= now else { return false }
                ready.append(sleeper.continuation)
                return true
            }
            return ready
        }

        var earliestDeadline: MonotonicInstant? { sleepers.map(\.deadline).min() }
    }

    let state = Mutex(State())
    /// Real time without activity after which an idle host's timers are fired regardless.
    public let quiescence: Duration

    public init(quiescence: Duration = .milliseconds(50)) {
        self.quiescence = quiescence
    }

    public var now: MonotonicInstant { state.withLock { $0.now } }

    public func sleep(until deadline: MonotonicInstant) async throws {
        try Task.checkCancellation()
        let id: UInt64? = state.withLock { state in
            guard deadline > state.now else { return nil }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                state.withLock { state in
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    state.activity += 1
                }
                settle()
            }
        } onCancel: {
            let cancelled: CheckedContinuation<Void, any Error>? = state.withLock { state in
                guard let i = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: i).continuation
            }
            cancelled?.resume(throwing: CancellationError())
        }
    }

    // MARK: Driven by the replay transport

    /// Sets time zero to the capture's first packet.
    func start(at timestamp: Int64?) {
        state.withLock { $0.origin = timestamp }
    }

    /// Whether the transport holds released packets it will deliver later (capture pacing).
    func setDeliveriesPending(_ pending: Bool) {
        state.withLock { state in
            state.deliveriesPending = pending
            state.activity += 1
        }
        settle()
    }

    /// A packet was handed to the host's inbound sequence.
    func delivered(_ timestamp: Int64) {
        state.withLock { state in
            state.inFlight.append(timestamp)
            state.activity += 1
        }
    }

    /// The host took the oldest delivered packet.
    func received() {
        state.withLock { state in
            guard state.inFlightHead < state.inFlight.count else { return }
            state.advance(to: state.inFlight[state.inFlightHead])
            state.inFlightHead += 1
            if state.inFlightHead == state.inFlight.count {
                state.inFlight.removeAll(keepingCapacity: true)
                state.inFlightHead = 0
            }
            state.activity += 1
        }
        settle()
    }

    /// The host sent the capture packet recorded at `timestamp`; the replay now waits for the host
    /// packet recorded at `next` (nil: none left).
    func hostSent(_ timestamp: Int64?, next: Int64?) {
        state.withLock { state in
            if let timestamp { state.advance(to: timestamp) }
            state.waitingForHost = next != nil
            state.nextHostPacket = next.flatMap { state.offset($0) }
            state.activity += 1
        }
        settle()
    }

    /// Calls `handler` when the host has stayed idle for `delay`: every delivered packet received, no
    /// timer pending, nothing new from the capture. Only something outside the host and the capture
    /// (the signal that stopped the recorded command) can explain what comes next.
    func onIdle(after delay: Duration, _ handler: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.idleDelay = delay
            state.idleHandler = handler
        }
        settle()
    }

    /// Wakes due sleepers and, when the host is idle, moves time to the next deadline the recording
    /// host also reached before its next packet.
    func settle() {
        var ready: [CheckedContinuation<Void, any Error>] = []
        var startWatchdog = false
        var startIdleWatch = false
        state.withLock { state in
            ready = state.due()
            if ready.isEmpty, state.hostIsIdle, let deadline = state.earliestDeadline {
                if let limit = state.nextHostPacket, deadline <= limit {
                    state.now = deadline
                    ready = state.due()
                } else if !state.watchdogRunning {
                    state.watchdogRunning = true
                    startWatchdog = true
                }
            } else if ready.isEmpty, state.hostIsWaitingForTheWorld, state.idleHandler != nil, !state.idleWatchRunning,
                      state.idleReportedAt != state.activity {
                state.idleWatchRunning = true
                startIdleWatch = true
            }
        }
        for continuation in ready { continuation.resume() }
        if startWatchdog { watch() }
        if startIdleWatch { watchIdle() }
    }

    func watchIdle() {
        let (activity, delay) = state.withLock { ($0.activity, $0.idleDelay) }
        Task { [self] in
            try? await Task.sleep(for: delay)
            var handler: (@Sendable () -> Void)?
            let again: Bool = state.withLock { state in
                state.idleWatchRunning = false
                guard state.hostIsWaitingForTheWorld else { return false }
                guard state.activity == activity else { return true }
                state.idleReportedAt = activity
                handler = state.idleHandler
                return false
            }
            handler?()
            if again { settle() }
        }
    }

    /// Fires the earliest timer once nothing has happened for `quiescence`.
    func watch() {
        let activity = state.withLock { $0.activity }
        Task { [self] in
            try? await Task.sleep(for: quiescence)
            var ready: [CheckedContinuation<Void, any Error>] = []
            let again: Bool = state.withLock { state in
                state.watchdogRunning = false
                guard state.hostIsIdle, let deadline = state.earliestDeadline else { return false }
                guard state.activity == activity else { return true }
                state.now = Swift.max(state.now, deadline)
                ready = state.due()
                state.activity += 1
                return false
            }
            for continuation in ready { continuation.resume() }
            if again { settle() }
        }
    }
}
