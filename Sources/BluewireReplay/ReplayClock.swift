import Bluewire
import BluewireCore
import Synchronization

/// The virtual clock of a host-driven replay: time is the capture's, and it runs as fast as the host
/// and the capture allow.
///
/// `now` is the capture time (microseconds since the capture's first packet) of the latest packet the
/// host received or sent, so a deadline the host computes lands where the recording host's did. When
/// the replay waits for the host's next packet, the host has received everything released and has
/// nothing on its way to the transport (the host tells its `ReplayTransport`, which tells this clock:
/// `HostActivityObservingTransport`), the host can only be waiting for a timer: the clock then jumps to the
/// earliest sleeper's deadline, at once if the recording host sent its next packet after that
/// deadline (its timer fired first too), otherwise after `quiescence` of real time without any
/// activity (a host whose response diverged from the capture then fails instead of hanging).
///
/// Time and the host's sleepers live in a `VirtualClock`, the same virtual clock tests advance by hand,
/// so sleepers wake in deadline order exactly as they do in a test; this type only decides when the
/// replay moves that clock. The two real-time waits (`quiescence` and the idle report) are not guesses
/// about when tasks are done: they detect a host that diverged from the capture, or that waits for a
/// signal the capture cannot contain, which no amount of capture time explains.
public final class ReplayClock: HostClock, Sendable {
    struct State {
        /// Capture timestamp that counts as time zero.
        var origin: Int64?
        /// Capture timestamps of packets delivered and not yet received by the host, oldest first.
        var inFlight: [Int64] = []
        var inFlightHead = 0
        /// Whether the replay waits for a host packet, and the capture time of that packet.
        var waitingForHost = false
        var nextHostPacket: MonotonicInstant?
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
        /// Whether the host reports its activity (`HostActivityObservingTransport`); a test that reads the
        /// transport by hand does not, and is idle as soon as it has received everything.
        var hostReportsActivity = false
        /// The host took packets and has not yet said it acted on them.
        var inboundUnacted = false
        /// Packets the host has queued for the transport's `send` and not yet handed off: the host is
        /// not idle while it is still writing.
        var outputPending = 0
        /// Nothing on its way in or out, in the replay or in the host.
        var nothingInTransit: Bool {
            !deliveriesPending && inFlightHead == inFlight.count && !inboundUnacted && outputPending == 0
        }

        var hostIsIdle: Bool { waitingForHost && nothingInTransit }
        /// The host has received everything and waits on no timer: only something from outside (a
        /// signal) can make it act, whether or not the capture expects more from it.
        func hostIsWaitingForTheWorld(hasSleepers: Bool) -> Bool {
            nothingInTransit && !hasSleepers
        }

        mutating func offset(_ timestamp: Int64) -> MonotonicInstant? {
            let base = origin ?? timestamp
            origin = base
            let (span, overflow) = timestamp.subtractingReportingOverflow(base)
            return overflow ? nil : MonotonicInstant(microseconds: span)
        }
    }

    let state = Mutex(State())
    /// The capture's time and the host's sleepers; only this type advances it.
    let time = VirtualClock()
    /// Real time without activity after which an idle host's earliest timer is fired although the
    /// recording host sent its next packet before that deadline. Only a host that diverged from the
    /// capture (or an application that stalls this long between two of its requests) gets there: a
    /// replay that follows its capture never needs it.
    public let quiescence: Duration

    /// One second: long enough that a loaded machine's scheduling does not pass for a divergence
    /// (50 ms did, once: an application between two requests), short enough that a diverged host fails
    /// fast instead of hanging.
    public static let defaultQuiescence: Duration = .seconds(1)

    public init(quiescence: Duration = ReplayClock.defaultQuiescence) {
        self.quiescence = quiescence
    }

    public var now: MonotonicInstant { time.now }

    public func sleep(until deadline: MonotonicInstant) async throws {
        try await time.sleep(until: deadline) { [self] in
            state.withLock { $0.activity += 1 }
            settle()
        }
    }

    /// The number of the host's tasks asleep on this clock (see `VirtualClock.sleeperCount`).
    public var sleeperCount: Int { time.sleeperCount }

    /// Suspends until at least `count` tasks are asleep on this clock (see `VirtualClock.waitForSleepers`).
    public func waitForSleepers(count: Int = 1) async {
        await time.waitForSleepers(count: count)
    }

    // MARK: Told by the host, through the replay transport (HostActivityObservingTransport)

    func hostReportsActivity() {
        state.withLock { $0.hostReportsActivity = true }
    }

    func hostActedOnInbound() {
        state.withLock { state in
            state.inboundUnacted = false
            state.activity += 1
        }
        settle()
    }

    func hostQueuedPacket() {
        state.withLock { state in
            state.outputPending += 1
            state.activity += 1
        }
    }

    func hostHandedOffPacket() {
        state.withLock { state in
            state.outputPending -= 1
            state.activity += 1
        }
        settle()
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
        let target: MonotonicInstant? = state.withLock { state in
            guard state.inFlightHead < state.inFlight.count else { return nil }
            let instant = state.offset(state.inFlight[state.inFlightHead])
            state.inFlightHead += 1
            if state.inFlightHead == state.inFlight.count {
                state.inFlight.removeAll(keepingCapacity: true)
                state.inFlightHead = 0
            }
            if state.hostReportsActivity { state.inboundUnacted = true }
            state.activity += 1
            return instant
        }
        advance(to: target)
    }

    /// The host sent the capture packet recorded at `timestamp`; the replay now waits for the host
    /// packet recorded at `next` (nil: none left).
    func hostSent(_ timestamp: Int64?, next: Int64?) {
        let target: MonotonicInstant? = state.withLock { state in
            let instant = timestamp.flatMap { state.offset($0) }
            state.waitingForHost = next != nil
            state.nextHostPacket = next.flatMap { state.offset($0) }
            state.activity += 1
            return instant
        }
        advance(to: target)
    }

    /// Moves capture time to `target` and settles; if that resumed a sleeper, the woken timer acts
    /// first (it may send, or sleep again, either of which settles again) before time jumps further.
    func advance(to target: MonotonicInstant?) {
        if let target, let earliest = time.nextDeadline, earliest <= target {
            time.advance(to: target)
            return
        }
        if let target { time.advance(to: target) }
        settle()
    }

    /// `VirtualClock.advance(to:)`, the synchronous form (also from async code): resumes due sleepers in
    /// deadline order without waiting for them.
    func moveTime(to target: MonotonicInstant) {
        time.advance(to: target)
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

    /// When the host is idle, moves time to the next deadline the recording host also reached before
    /// its next packet (`VirtualClock` resumes the sleepers due there), or starts the quiescence watch.
    func settle() {
        let earliest = time.nextDeadline
        var jump: MonotonicInstant?
        var startWatchdog = false
        var startIdleWatch = false
        state.withLock { state in
            if state.hostIsIdle, let deadline = earliest {
                if let limit = state.nextHostPacket, deadline <= limit {
                    jump = deadline
                } else if !state.watchdogRunning {
                    state.watchdogRunning = true
                    startWatchdog = true
                }
            } else if state.hostIsWaitingForTheWorld(hasSleepers: earliest != nil), state.idleHandler != nil,
                      !state.idleWatchRunning, state.idleReportedAt != state.activity {
                state.idleWatchRunning = true
                startIdleWatch = true
            }
        }
        if let jump { time.advance(to: jump) }
        if startWatchdog { watch() }
        if startIdleWatch { watchIdle() }
    }

    func watchIdle() {
        let (activity, delay) = state.withLock { ($0.activity, $0.idleDelay) }
        Task { [self] in
            try? await Task.sleep(for: delay)
            var handler: (@Sendable () -> Void)?
            let hasSleepers = time.nextDeadline != nil
            let again: Bool = state.withLock { state in
                state.idleWatchRunning = false
                guard state.hostIsWaitingForTheWorld(hasSleepers: hasSleepers) else { return false }
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
            let earliest = time.nextDeadline
            var jump: MonotonicInstant?
            let again: Bool = state.withLock { state in
                state.watchdogRunning = false
                guard state.hostIsIdle, let deadline = earliest else { return false }
                guard state.activity == activity else { return true }
                jump = deadline
                state.activity += 1
                return false
            }
            if let jump { moveTime(to: jump) }
            if again { settle() }
        }
    }
}
