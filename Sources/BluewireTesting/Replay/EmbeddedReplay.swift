import BluewireCore
import BluewireHostEngine
import BluewireSnoop
import BluewireTransport

/// Why a capture replayed into an `EmbeddedReplay` stopped matching the host.
public enum EmbeddedReplayDivergence: Error, Hashable, Sendable, CustomStringConvertible {
    /// The host wrote a packet the capture does not hold there: other bytes than the recording host
    /// sent (`.differentBytes`), or a packet of a kind the capture has no more of (`.unexpectedPacket`).
    case mismatch(ReplayMismatch)
    /// The host is idle — everything it wrote matched, every controller packet released so far was
    /// fed to it, and no timer of its falls due before the packet's capture time — but the capture
    /// has it send `expected` next: the recording host did something this one will not.
    case hostSilent(expected: ReplayPacket)

    /// The capture record the divergence is at.
    public var recordIndex: Int? {
        switch self {
        case .mismatch(let mismatch): mismatch.recordIndex
        case .hostSilent(let expected): expected.recordIndex
        }
    }

    public var description: String {
        switch self {
        case .mismatch(let mismatch): "\(mismatch)"
        case .hostSilent(let expected):
            "the host is idle but the capture has it send record \(expected.recordIndex): \(expected.packet.type) \(hexBytes(expected.packet.payload))"
        }
    }
}

/// A capture replayed into an `EmbeddedHostEngine`, with no task, no transport and no real time.
///
/// `ReplayTransport` and `ReplayClock` replay a capture under a `BluetoothHost`, whose engine runs
/// on tasks; there "the host has nothing more to say" can only be concluded after a while of real
/// time without activity (`ReplayClock.quiescence`). Here the engine is driven by hand, so idleness
/// is exact: after each call every packet the engine decided to write is in hand, and its next
/// deadline is known (`HostEngine.nextDeadline`). The replay therefore
///
/// - feeds the capture's controller packets in capture order, each once every host packet before it
///   in the capture was matched (`ReplayScript`), at its capture time: the engine's clock is moved
///   to the packet's timestamp first (time zero is the capture's first packet), so a timer due
///   before it fires first, as it did for the recording host;
/// - holds every packet the engine writes against the capture at once, a difference being a
///   `.mismatch` at that packet;
/// - when the engine is idle and the capture has it send a packet next, moves time to the engine's
///   next deadline if that comes before the packet's capture time (its timer fired first for the
///   recording host too), and otherwise stops: `run()` returns that packet, for the test to make the
///   request that sends it (a connect, a read) or to call `finish()`, which reports it as
///   `.hostSilent`. No wait, no guess: a host that diverged is reported on the call that diverged.
///
/// ```swift
/// var replay = try EmbeddedReplay(captureBytes: bytes, configuration: HostEngineConfiguration(randomAddress: recorded))
/// let start = try replay.perform(.start)
/// #expect(replay.host.result(start) != nil)
/// try replay.finish()            // the whole capture was exchanged, byte for byte
/// ```
public struct EmbeddedReplay {
    /// The engine under replay; read its state and completions here.
    public var host: EmbeddedHostEngine
    /// The capture's packets and what has been matched and released so far.
    public private(set) var script: ReplayScript
    /// Controller packets released and not yet fed to the engine, in capture order.
    public private(set) var pending: [ReplayPacket] = []
    /// The engine time of capture time zero (the capture's first packet).
    let start: MonotonicInstant
    let origin: Int64?
    /// The engine time `run()` last fired the engine's timers at.
    var firedAt: MonotonicInstant?

    /// A replay of `script` into a fresh engine with `configuration` (the recording host's random
    /// address, MTU and so on: what it writes must be what the recording host wrote).
    public init(script: ReplayScript, configuration: HostEngineConfiguration) {
        host = EmbeddedHostEngine(configuration: configuration)
        self.script = script
        start = host.now
        origin = script.firstTimestamp
        pending = self.script.release()
    }

    /// A replay of a whole capture file's bytes.
    public init(captureBytes: [UInt8], configuration: HostEngineConfiguration) throws(CaptureError) {
        self.init(script: try ReplayScript(captureBytes: captureBytes), configuration: configuration)
    }

    /// Asks the engine for `request`, then replays as far as the capture goes without another
    /// request (`run()`). Returns the request's id (`host.result(_:)` has its completion, if any).
    @discardableResult
    public mutating func perform(_ request: HostRequest) throws(EmbeddedReplayDivergence) -> HostRequestID {
        let id = host.perform(request)
        _ = try run()
        return id
    }

    /// Replays until the engine is idle and waits for the capture's next host packet, which it
    /// returns (nil once the capture has no host packet left and every controller packet was fed).
    /// Throws at the first packet the engine writes that the capture does not hold.
    @discardableResult
    public mutating func run() throws(EmbeddedReplayDivergence) -> ReplayPacket? {
        while true {
            try matchWritten()
            if !pending.isEmpty {
                let next = pending[0]
                if let due = instant(next.timestamp), due > host.now {
                    // Timers due before the packet fire first; what they write is matched before it.
                    advance(to: due)
                    continue
                }
                pending.removeFirst()
                host.controller(next.packet)
                continue
            }
            guard let awaited = script.nextHostPacket else { return nil }
            // A deadline the engine keeps after its time came would be fired again and again: it
            // is the engine's bug to report, not a reason to loop.
            if let deadline = host.engine.nextDeadline, deadline <= (instant(awaited.timestamp) ?? deadline),
               deadline > host.now || firedAt != host.now {
                firedAt = max(deadline, host.now)
                advance(to: max(deadline, host.now))
                continue
            }
            return awaited
        }
    }

    /// Whether every host packet of the capture was matched and every controller packet released.
    public var isExhausted: Bool { mutating get { script.isExhausted } }

    /// Replays to the end: throws `.hostSilent` if the capture still has the host send something.
    public mutating func finish() throws(EmbeddedReplayDivergence) {
        if let awaited = try run() { throw .hostSilent(expected: awaited) }
    }

    /// Holds every packet the engine wrote against the capture, queueing what each releases.
    mutating func matchWritten() throws(EmbeddedReplayDivergence) {
        for packet in host.takeWritten() {
            switch script.hostSent(packet) {
            case .success(let released): pending += released
            case .failure(let mismatch): throw .mismatch(mismatch)
            }
        }
    }

    /// Moves the engine's clock to `target` (never back); due timers fire.
    mutating func advance(to target: MonotonicInstant) {
        guard target > host.now else {
            host.advance(by: .zero)
            return
        }
        host.advance(by: TimeSpan(microseconds: target.microseconds - host.now.microseconds))
    }

    /// The engine time of capture timestamp `timestamp`.
    func instant(_ timestamp: Int64) -> MonotonicInstant? {
        guard let origin else { return nil }
        let (span, overflow) = timestamp.subtractingReportingOverflow(origin)
        guard !overflow, span >= 0 else { return nil }
        return start + TimeSpan(microseconds: span)
    }
}

private func hexBytes(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { byte in
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }.joined(separator: " ")
}
