import BluewireCore
import Synchronization

/// The counters of a run in progress, shared between the task that moves packets and the one that
/// reports progress and ends the run.
final class ThroughputMeter: Sendable {
    struct State {
        var start: MonotonicInstant
        /// Received packets (notify) by sequence number; sent packets (writes) counted in order.
        var tracker = ThroughputSequenceTracker()
        var lastPacket: MonotonicInstant?
        var latencies: [TimeSpan] = []
        var largestPacket = 0
        /// Progress already reported: when, and the octets then.
        var reportedAt: MonotonicInstant
        var reportedOctets = 0
        var stopRequested = false
    }

    private let state: Mutex<State>
    /// Whether the receiving side's numbers tell lost packets (notify) or only what was sent.
    let countsLoss: Bool

    init(start: MonotonicInstant, countsLoss: Bool) {
        state = Mutex(State(start: start, reportedAt: start))
        self.countsLoss = countsLoss
    }

    /// A packet arrived (notify) at `time`.
    func received(_ value: ArraySlice<UInt8>, at time: MonotonicInstant) {
        state.withLock { state in
            let sequence = ThroughputProfile.sequence(of: value) ?? state.tracker.nextExpected
            state.tracker.record(sequence: sequence, octets: value.count)
            state.lastPacket = time
            if value.count > state.largestPacket { state.largestPacket = value.count }
        }
    }

    /// A packet of `octets` was sent (writes); `latency` for an acknowledged one.
    func sent(octets: Int, at time: MonotonicInstant, latency: TimeSpan? = nil) {
        state.withLock { state in
            state.tracker.record(sequence: state.tracker.nextExpected, octets: octets)
            state.lastPacket = time
            if octets > state.largestPacket { state.largestPacket = octets }
            if let latency { state.latencies.append(latency) }
        }
    }

    /// Packets of `octets` each sent in order until `count` in all (a stream the engine runs, read
    /// now and then): the ones not counted yet are counted at `time`.
    func sentUpTo(_ count: Int, octets: Int, at time: MonotonicInstant) {
        state.withLock { state in
            guard count > state.tracker.packets else { return }
            while state.tracker.packets < count { state.tracker.record(sequence: state.tracker.nextExpected, octets: octets) }
            state.lastPacket = time
            if octets > state.largestPacket { state.largestPacket = octets }
        }
    }

    var packets: Int { state.withLock { $0.tracker.packets } }

    func requestStop() { state.withLock { $0.stopRequested = true } }
    var stopRequested: Bool { state.withLock { $0.stopRequested } }

    /// The progress since the start, and over the interval since the last call.
    func progress(at now: MonotonicInstant) -> ThroughputProgress {
        state.withLock { state in
            let progress = ThroughputProgress(
                elapsed: now - state.start, packets: state.tracker.packets, octets: state.tracker.octets,
                lost: countsLoss ? state.tracker.lost : nil,
                intervalKilobitsPerSecond: ThroughputReport.kilobitsPerSecond(
                    octets: state.tracker.octets - state.reportedOctets, over: now - state.reportedAt),
                kilobitsPerSecond: ThroughputReport.kilobitsPerSecond(octets: state.tracker.octets, over: now - state.start))
            state.reportedAt = now
            state.reportedOctets = state.tracker.octets
            return progress
        }
    }

    func snapshot() -> State { state.withLock { $0 } }
}
