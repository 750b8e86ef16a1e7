import Bluewire
import BluewireCore
import BluewireSnoop
import BluewireTransport
import Synchronization

/// A transport whose controller is a capture: `--transport replay:FILE`.
///
/// Controller-to-host packets are delivered in capture order, each once the host has sent every
/// host-to-controller packet that precedes it in the capture, so the host drives the pace (or, with
/// `.capturePace`, no sooner than the capture's own spacing on a clock). Every packet the host sends
/// must match the capture: HCI commands in order per opcode, ACL in order per connection handle (see
/// `ReplayScript`). A mismatch fails `send` with `TransportError.replay`, carrying the record index and
/// both packets, and ends `inbound` with the same error so a host waiting for an event sees it too.
///
/// When every packet has been sent and delivered, `inbound` finishes cleanly. In strict mode, closing
/// with capture packets the host never sent is a failure too (`failure`, `verify()`).
///
/// ```swift
/// let transport = try ReplayTransport(capturePath: "session.btsnoop", options: .init(strict: true))
/// let host = BluetoothHost(transport: transport, configuration: .init(randomAddress: recordedAddress))
/// try await host.start()
/// await host.close()
/// try await transport.verify()
/// ```
public actor ReplayTransport: HostActivityObservingTransport {
    public struct Options: Sendable {
        /// When released controller packets are delivered.
        public enum Pacing: Sendable {
            /// At once: as fast as the host sends.
            case hostDriven
            /// No sooner than their capture timestamps, relative to the first delivery, on `clock`
            /// (timestamps that step backwards deliver at once).
            case capturePace(any HostClock)
        }

        public var pacing: Pacing
        /// Whether host packets of the capture never sent make the replay fail at `close()`.
        public var strict: Bool
        /// Whether `inbound` finishes once the capture is exhausted (else it stays open until `close()`).
        public var finishWhenExhausted: Bool
        /// How long in real time an idle host may go without sending the packet the capture has it send
        /// before one of its timers that the recording host never reached is fired anyway
        /// (`ReplayClock.quiescence`): the time a host that diverged from the capture takes to fail.
        public var quiescence: Duration

        public init(
            pacing: Pacing = .hostDriven, strict: Bool = false, finishWhenExhausted: Bool = true,
            quiescence: Duration = ReplayClock.defaultQuiescence
        ) {
            self.pacing = pacing
            self.strict = strict
            self.finishWhenExhausted = finishWhenExhausted
            self.quiescence = quiescence
        }
    }

    public nonisolated let inbound: HCIInboundPackets
    let continuation: HCIInboundPackets.Continuation
    public nonisolated let options: Options
    /// The capture's time, as far as the host has received or sent packets (see `ReplayClock`).
    public nonisolated let clock: ReplayClock
    var script: ReplayScript
    /// The first mismatch, or in strict mode after `close()`, the packets never sent.
    public private(set) var failure: ReplayMismatch?
    var isClosed = false
    var isFinished = false
    /// Controller packets handed to `inbound` so far.
    public private(set) var deliveredCount = 0
    /// Released packets in `inbound` the host has not taken yet; the replay tops them up to
    /// `deliveryWindow` as the host takes them, so a capture of any size is held a window at a time.
    nonisolated let queued: DeliveryWindow

    let firstMismatch = Mutex<ReplayMismatch?>(nil)
    /// The packet the host sent that the capture does not hold, once there is one (not the strict
    /// check at close): readable without awaiting, from a process that is about to exit on the
    /// failure it caused.
    public nonisolated var mismatch: ReplayMismatch? { firstMismatch.withLock { $0 } }

    /// Controller packets handed to `inbound` ahead of the host at most.
    static let deliveryWindow = 256

    // Capture pacing.
    var pacer: Task<Void, Never>?
    var paceOrigin: (instant: MonotonicInstant, timestamp: Int64)?
    var lastOffset: Int64 = 0

    /// A replay of `script`. Controller packets that no host packet precedes are released at once.
    public init(script: ReplayScript, options: Options = Options()) {
        let (packets, continuation) = HCIInboundPackets.makeStream()
        let clock = ReplayClock(quiescence: options.quiescence)
        let queued = DeliveryWindow()
        clock.start(at: script.firstTimestamp)
        inbound = packets.observing { [clock, queued] _ in
            clock.received()
            queued.taken()
        }
        self.clock = clock
        self.continuation = continuation
        self.options = options
        self.queued = queued
        self.script = script
        clock.hostSent(nil, next: self.script.nextHostPacket?.timestamp)
        if case .hostDriven = options.pacing {
            // `deliverReleased()`, which a synchronous initializer cannot call.
            while queued.count < Self.deliveryWindow, let packet = self.script.takeReleased() {
                clock.delivered(packet.timestamp)
                queued.put()
                continuation.yield(packet.packet)
                deliveredCount += 1
            }
            var more = false
            if queued.count >= Self.deliveryWindow { more = self.script.peekReleased() != nil }
            queued.setMore(more)
            clock.setDeliveriesPending(more)
            var exhausted = false
            if options.finishWhenExhausted { exhausted = self.script.isExhausted }
            if exhausted {
                isFinished = true
                continuation.finish()
            }
        } else {
            let pending = self.script.peekReleased() != nil
            clock.setDeliveriesPending(pending)
            if pending { Task { await self.startPacerIfNeeded() } }
        }
        queued.onLow { [weak self] in
            guard let self else { return }
            Task { await self.deliverReleased() }
        }
    }

    /// A replay of the capture file at `capturePath` (btsnoop or pcapng), read as the replay goes; the
    /// file is checked whole first (one record at a time), so a capture that ends inside a record fails here.
    public init(capturePath: String, options: Options = Options()) throws(CaptureFileError) {
        self.init(script: try ReplayScript(capturePath: capturePath), options: options)
    }

    public func send(_ packet: HCIPacket) async throws(TransportError) {
        guard !isClosed else { throw .closed }
        if let failure { throw .replay(failure) }
        if let mismatch = script.match(packet) {
            failure = mismatch
            firstMismatch.withLock { $0 = mismatch }
            pacer?.cancel()
            isFinished = true
            continuation.finish(throwing: .replay(mismatch))
            throw .replay(mismatch)
        }
        let lastMatched = script.lastMatched?.timestamp
        if case .hostDriven = options.pacing {
            deliverReleased()
        } else {
            clock.setDeliveriesPending(script.peekReleased() != nil)
            startPacerIfNeeded()
        }
        clock.hostSent(lastMatched, next: script.nextHostPacket?.timestamp)
    }

    public func close() async {
        guard !isClosed else { return }
        isClosed = true
        pacer?.cancel()
        if options.strict, failure == nil, let unsent = script.unsentMismatch() { failure = unsent }
        isFinished = true
        continuation.finish()
    }

    /// Throws the replay's failure: the first mismatch, or (strict mode) host packets never sent.
    public func verify() throws(ReplayMismatch) {
        if let failure { throw failure }
        if options.strict, let unsent = script.unsentMismatch() { throw unsent }
    }

    /// The clock a host driving this replay should run its timers on: the replay's virtual clock
    /// when the host drives the pace, the pacing clock with `.capturePace`.
    public nonisolated var hostClock: any HostClock {
        if case .capturePace(let pacingClock) = options.pacing { return pacingClock }
        return clock
    }

    /// Calls `handler` once the host has been idle for `delay` (every released packet received, no
    /// timer pending): what the recorded host did next, if anything, came from outside, typically the
    /// signal that stopped the command (`bluewire replay` sends it). Called again only after new activity.
    public func onIdle(after delay: Duration = .milliseconds(500), _ handler: @escaping @Sendable () -> Void) {
        clock.onIdle(after: delay, handler)
    }

    // MARK: What the host is still doing, for the clock (HostActivityObservingTransport)

    public nonisolated func hostReportsActivity() { clock.hostReportsActivity() }
    public nonisolated func hostActedOnInbound() { clock.hostActedOnInbound() }
    public nonisolated func hostQueuedPacket() { clock.hostQueuedPacket() }
    public nonisolated func hostHandedOffPacket() { clock.hostHandedOffPacket() }

    /// Host packets of the capture not sent so far, in capture order (reads the rest of the capture: for
    /// tests and small captures).
    public var unsentPackets: [ReplayPacket] { script.unsentPackets }
    /// The first host packet of the capture not sent yet: what the replay waits for.
    public var nextHostPacket: ReplayPacket? { script.nextHostPacket }
    /// Host packets matched and controller packets released so far.
    public var sentCount: Int { script.sentCount }
    public var releasedCount: Int { script.releasedCount }
    /// Whether every packet of the capture was sent or released.
    public var isExhausted: Bool { script.isExhausted }

    /// Hands released controller packets to `inbound` until `deliveryWindow` of them wait there
    /// (host-driven pacing); tells the clock whether more are released and held back.
    func deliverReleased() {
        guard !isFinished else { return }
        while queued.count < Self.deliveryWindow, let packet = script.takeReleased() {
            clock.delivered(packet.timestamp)
            queued.put()
            continuation.yield(packet.packet)
            deliveredCount += 1
        }
        var more = false
        if queued.count >= Self.deliveryWindow { more = script.peekReleased() != nil }
        queued.setMore(more)
        clock.setDeliveriesPending(more)
        finishIfExhausted()
    }

    func finishIfExhausted() {
        guard options.finishWhenExhausted, !isFinished, script.isExhausted else { return }
        isFinished = true
        continuation.finish()
    }

    func startPacerIfNeeded() {
        guard case .capturePace(let clock) = options.pacing, pacer == nil, !isFinished, script.peekReleased() != nil else { return }
        pacer = Task { await self.pace(on: clock) }
    }

    /// Delivers the released packets, each at its capture offset from the first one.
    func pace(on pacingClock: any HostClock) async {
        while !isFinished, let packet = script.peekReleased() {
            let origin = paceOrigin ?? (pacingClock.now, packet.timestamp)
            paceOrigin = origin
            let (offset, overflow) = packet.timestamp.subtractingReportingOverflow(origin.timestamp)
            // Captures step backwards at times: never schedule before the previous packet.
            lastOffset = overflow ? lastOffset : Swift.max(lastOffset, offset)
            do {
                try await pacingClock.sleep(until: origin.instant + TimeSpan(microseconds: lastOffset))
            } catch {
                break
            }
            guard !isFinished, let taken = script.takeReleased() else { break }
            clock.delivered(taken.timestamp)
            clock.setDeliveriesPending(script.peekReleased() != nil)
            continuation.yield(taken.packet)
            deliveredCount += 1
        }
        pacer = nil
        finishIfExhausted()
        startPacerIfNeeded()
    }
}

/// How many delivered packets wait in a replay's `inbound`, and what to do when the host has taken
/// most of them (deliver more).
final class DeliveryWindow: Sendable {
    struct State {
        var count = 0
        var refillRequested = false
        /// Whether the replay holds released packets it has not delivered.
        var more = false
        var onLow: (@Sendable () -> Void)?
    }

    let state = Mutex(State())

    var count: Int { state.withLock { $0.count } }

    func put() {
        state.withLock {
            $0.count += 1
            $0.refillRequested = false
        }
    }

    /// The host took one; below a quarter of the window, more are asked for (once until they come).
    func taken() {
        let handler: (@Sendable () -> Void)? = state.withLock { state in
            state.count -= 1
            guard state.more, state.count <= ReplayTransport.deliveryWindow / 4, !state.refillRequested else { return nil }
            state.refillRequested = true
            return state.onLow
        }
        handler?()
    }

    func setMore(_ more: Bool) {
        state.withLock { $0.more = more }
    }

    func onLow(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.onLow = handler }
    }
}
