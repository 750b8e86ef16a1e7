import Bluewire
import BluewireCore
import BluewireSnoop
import BluewireTransport

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

    // Capture pacing.
    var paced: [ReplayPacket] = []
    var pacer: Task<Void, Never>?
    var paceOrigin: (instant: MonotonicInstant, timestamp: Int64)?
    var lastOffset: Int64 = 0

    /// A replay of `script`. Controller packets that no host packet precedes are released at once.
    public init(script: ReplayScript, options: Options = Options()) {
        let (packets, continuation) = HCIInboundPackets.makeStream()
        let clock = ReplayClock(quiescence: options.quiescence)
        clock.start(at: script.packets.first?.timestamp)
        inbound = packets.observing { [clock] _ in clock.received() }
        self.clock = clock
        self.continuation = continuation
        self.options = options
        var script = script
        let initial = script.release()
        self.script = script
        clock.hostSent(nil, next: script.nextHostPacket?.timestamp)
        if case .hostDriven = options.pacing {
            for packet in initial {
                clock.delivered(packet.timestamp)
                continuation.yield(packet.packet)
            }
            deliveredCount = initial.count
            if options.finishWhenExhausted && script.isExhausted {
                isFinished = true
                continuation.finish()
            }
        } else {
            paced = initial
            clock.setDeliveriesPending(!initial.isEmpty)
            if !initial.isEmpty { Task { await self.startPacerIfNeeded() } }
        }
    }

    /// A replay of the capture file at `capturePath` (btsnoop or pcapng, read whole).
    public init(capturePath: String, options: Options = Options()) throws(CaptureFileError) {
        let reader = try CaptureFileReader(path: capturePath)
        var records: [CaptureRecord] = []
        while let record = try reader.next() { records.append(record) }
        self.init(script: ReplayScript(records: records), options: options)
    }

    public func send(_ packet: HCIPacket) async throws(TransportError) {
        guard !isClosed else { throw .closed }
        if let failure { throw .replay(failure) }
        startPacerIfNeeded()
        switch script.hostSent(packet) {
        case .success(let released):
            deliver(released)
            clock.hostSent(script.lastMatched?.timestamp, next: script.nextHostPacket?.timestamp)
        case .failure(let mismatch):
            failure = mismatch
            pacer?.cancel()
            isFinished = true
            continuation.finish(throwing: .replay(mismatch))
            throw .replay(mismatch)
        }
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

    /// Host packets of the capture not sent so far, in capture order.
    public var unsentPackets: [ReplayPacket] { script.unsentPackets }
    /// Host packets matched and controller packets released so far.
    public var sentCount: Int { script.sentCount }
    public var releasedCount: Int { script.releasedCount }
    /// Whether every packet of the capture was sent or released.
    public var isExhausted: Bool { script.isExhausted }

    func deliver(_ packets: [ReplayPacket]) {
        if case .capturePace = options.pacing {
            paced += packets
            clock.setDeliveriesPending(!paced.isEmpty)
            startPacerIfNeeded()
            return
        }
        for packet in packets {
            clock.delivered(packet.timestamp)
            continuation.yield(packet.packet)
        }
        deliveredCount += packets.count
        finishIfExhausted()
    }

    func finishIfExhausted() {
        guard options.finishWhenExhausted, script.isExhausted, paced.isEmpty, !isFinished else { return }
        isFinished = true
        continuation.finish()
    }

    func startPacerIfNeeded() {
        guard case .capturePace(let clock) = options.pacing, pacer == nil, !paced.isEmpty, !isFinished else { return }
        pacer = Task { await self.pace(on: clock) }
    }

    /// Delivers the paced packets, each at its capture offset from the first one.
    func pace(on pacingClock: any HostClock) async {
        while !paced.isEmpty && !isFinished {
            let packet = paced[0]
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
            guard !isFinished, !paced.isEmpty else { break }
            paced.removeFirst()
            clock.delivered(packet.timestamp)
            clock.setDeliveriesPending(!paced.isEmpty)
            continuation.yield(packet.packet)
            deliveredCount += 1
        }
        pacer = nil
        finishIfExhausted()
        startPacerIfNeeded()
    }
}
