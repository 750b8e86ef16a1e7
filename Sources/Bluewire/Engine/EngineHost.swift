import BluewireCore
import BluewireGATT
import BluewireHostEngine
import BluewireTransport

/// The sans-I/O `HostEngine` on a transport, with async/await: the thin shell that owns the
/// transport and the clock, feeds the engine what the controller sends and the time, writes what it
/// decides, and turns its completions into async results and its events into a stream. It holds no
/// protocol logic: everything that decides is in the engine, exactly as a firmware's main loop
/// runs it (Examples/Firmware).
///
/// `BluetoothHost` is moving onto this shell (Docs/Design.md); features that live only in the
/// engine so far — pairing, encryption and bonds (Core Vol 3 Part H), credit based channels and EATT
/// (Vol 3 Part A §10, Part G §5.3) — are reached through it today (`bluewire pair`).
///
/// ```swift
/// let host = EngineHost(transport: try await TransportSpec(parsing: "tcp:127.0.0.1:9001").open(),
///                       configuration: HostEngineConfiguration(randomAddress: address))
/// await host.configureSecurity(HostSecurityConfiguration(pairing: PairingConfiguration(), crypto: SMPCrypto(SwiftCryptoSMP())))
/// _ = try await host.perform(.start).get()
/// guard case .connected(let link) = try await host.perform(.connect(peer, LEConnectionParameters())).get() else { ... }
/// let level = try await host.perform(.pair(connection: link.handle)).get()
/// ```
public actor EngineHost {
    public nonisolated let transport: any HCITransport
    public nonisolated let clock: any HostClock
    var engine: HostEngine
    /// The callers waiting for their requests' completions. Unsafe continuations, not checked ones
    /// (a checked one allocates a canary per request): each is resumed exactly once, by whoever
    /// removes it from this map (its completion, `abandon`, or the end of the host).
    var waiters: [HostRequestID: UnsafeContinuation<Result<HostCompletion, HostEngineError>, Never>] = [:]
    var nextRequestID: UInt32 = 1
    var observers: [UInt64: AsyncStream<HostEngineEvent>.Continuation] = [:]
    var nextObserverID: UInt64 = 1
    let outbound: AsyncStream<HCIPacket>.Continuation
    let outboundPackets: AsyncStream<HCIPacket>
    var readerTask: Task<Void, Never>?
    var writerTask: Task<Void, Never>?
    var timerTask: Task<Void, Never>?
    /// When `timerTask` wakes (EngineHost+Timer).
    var timerDeadline: MonotonicInstant?
    /// Which armed timer `timerTask` is: a replaced timer that had already woken must not act as the
    /// current one (EngineHost+Timer).
    var timerGeneration: UInt64 = 0
    /// The clock is the machine's: a timer left sleeping past the need for it is invisible, so it is
    /// kept rather than replaced on every ATT request (EngineHost+Timer).
    let keepsEarlierTimer: Bool
    /// The transport, when it wants to know what the host is still doing (`HostActivityObservingTransport`).
    nonisolated let activityTracker: (any HostActivityObservingTransport)?
    var isOpen = false
    /// `close()` was called (the host may never have opened).
    var isClosed = false
    /// The `L2CAPChannel`s and listeners the engine's channel events go to (EngineHost+Channels).
    var channelRouter = EngineChannelRouter()
    /// Answers the engine's passkey and comparison prompts (EngineHost+Pairing).
    var pairingDelegate: (any PairingDelegate)?
    /// The per-handle notification streams of `EngineConnection.notifications(for:)` (EngineHost+NotificationStreams).
    var notificationStreams = EngineNotificationStreams()
    /// Gets every notification and indication as it is decoded, on the host's executor (EngineHost+Notifications).
    var notificationHandler: (@Sendable (_ connection: UInt16, _ notification: GATTNotification) -> Void)?
    /// A `BluetoothHost` on this host's executor (Shell/): gets every event but notifications, in
    /// order with the completions, then `.finished` when the host closes or its transport ends.
    var shellTap: (@Sendable (EngineShellTap) -> Void)?
    /// Whether the shell wants `.drained` at the end of each drain (while it has ACL queue waiters):
    /// off, a drain costs it nothing.
    var shellWantsDrained = false
    /// Storage for `drainNotificationLane`'s batches, kept so that a drain allocates nothing.
    var notificationBatch: [HostNotification] = []
    /// The generation of each link up now, by handle: a later link that gets a freed handle gets a
    /// new one (EngineHost+LinkGenerations).
    var linkGenerations: [UInt16: UInt64] = [:]
    var nextLinkGeneration: UInt64 = 1
    /// The request `performNow` runs, and its completion once the drain saw it (EngineHost+PerformNow).
    var immediateRequest: HostRequestID?
    var immediateResult: Result<HostCompletion, HostEngineError>?
    /// Tasks waiting in `waitForEngineState` (EngineHost+StateWaiters), checked at the end of each drain.
    var stateWaiters: [EngineStateWaiter] = []
    /// The scan `scan(filter:parameters:duration:)` feeds (EngineHost+Scanning).
    var scanRecord: EngineScanRecord?
    /// Each link's GATT client session, subscription sinks and end waiters (EngineHost+Links).
    var linkRecords = EngineLinkRecords()
    /// Why the transport ended, if it failed; requests fail with `.notRunning` after it.
    public private(set) var transportFailure: TransportError?

    public init(transport: any HCITransport, configuration: HostEngineConfiguration, clock: any HostClock = SystemHostClock()) {
        self.transport = transport
        self.clock = clock
        keepsEarlierTimer = clock is SystemHostClock
        activityTracker = transport as? any HostActivityObservingTransport
        engine = HostEngine(configuration: configuration)
        (outboundPackets, outbound) = AsyncStream<HCIPacket>.makeStream(bufferingPolicy: .unbounded)
    }

    /// Gives the engine its Security Manager configuration (before connections, see `HostEngine`).
    public func configureSecurity(_ security: HostSecurityConfiguration) {
        engine.configureSecurity(security)
    }

    /// The bonds the engine holds (in memory).
    public var bonds: [HostBond] { engine.bonds }

    /// The random static address the engine uses (set in bring-up).
    public var localAddress: BluetoothAddress { engine.configuration.randomAddress }

    /// The connection state of `address` (`HostEngine.state(of:)`): Disconnected.Initial for a peer
    /// never connected to; `Error` after a failure, with its cause in `failure(of:)`, until
    /// `perform(.reset(address))`. Transitions arrive in `events()` as `.stateChanged`.
    public func state(of address: BluetoothAddress) -> ConnectionState { engine.state(of: address) }

    /// Why `address`'s machine is in `Error`, while it is (`HostEngine.failure(of:)`).
    public func failure(of address: BluetoothAddress) -> HostEngineError? { engine.failure(of: address) }

    /// The scan's state machine (`HostEngine.scanState`): Scanning while a scan runs, `Error` after one
    /// failed, with its cause in `scanFailure`, until `perform(.resetScan)`. Transitions arrive in
    /// `events()` as `.scanStateChanged`.
    public var scanState: ConnectionState { engine.scanState }

    /// Why the scan's machine is in `Error`, while it is (`HostEngine.scanFailure`).
    public var scanFailure: HostEngineError? { engine.scanFailure }

    /// Adds bonds (from a `BondFile`): the engine encrypts with them instead of pairing.
    public func addBonds(_ bonds: [HostBond]) {
        for bond in bonds { engine.addBond(bond) }
    }

    /// The engine's events from now on, in order, until `close()`.
    public func events() -> AsyncStream<HostEngineEvent> {
        let (stream, continuation) = AsyncStream<HostEngineEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = nextObserverID
        nextObserverID += 1
        observers[id] = continuation
        continuation.onTermination = { _ in Task { await self.removeObserver(id) } }
        return stream
    }

    func removeObserver(_ id: UInt64) { observers[id] = nil }

    /// Hands `request` to the engine and waits for its completion. The transport starts with the
    /// first request (normally `.start`).
    public func perform(_ request: HostRequest) async -> Result<HostCompletion, HostEngineError> {
        if !isOpen { open() }
        guard transportFailure == nil, isOpen else { return .failure(.notRunning) }
        let id = HostRequestID(nextRequestID)
        nextRequestID &+= 1
        return await withUnsafeContinuation { continuation in
            waiters[id] = continuation
            engine.perform(request, id: id, now: clock.now)
            drain()
        }
    }

    /// How many requests the engine was handed so far (tests count what one call costs).
    package var requestsPerformed: UInt32 { nextRequestID &- 1 }

    /// Fails what waits, ends the event streams and closes the transport. Links are not
    /// disconnected first: perform `.disconnect` for each before, as `bluewire pair` does.
    public func close() async {
        // A host closed before its first request never opens afterwards (a later `perform` would
        // start the transport's reader and writer on a closed transport).
        isClosed = true
        guard isOpen else { return }
        isOpen = false
        finish()
        await transport.close()
        readerTask?.cancel()
    }

    // MARK: the loop

    func open() {
        guard readerTask == nil, !isClosed else { return }
        isOpen = true
        activityTracker?.hostReportsActivity()
        let transport = self.transport, packets = outboundPackets, tracker = activityTracker
        writerTask = Task { [weak self] in
            for await packet in packets {
                do throws(TransportError) {
                    try await transport.send(packet)
                    tracker?.hostHandedOffPacket()
                } catch {
                    tracker?.hostHandedOffPacket()
                    await self?.transportEnded(error)
                    return
                }
            }
        }
        readerTask = Task { await self.runInbound() }
    }

    func runInbound() async {
        var iterator = transport.inbound.makeAsyncIterator()
        var batch: [HCIPacket] = []
        do throws(TransportError) {
            while let packet = try await iterator.next(isolation: self) {
                // Closed (`close()` awaits the transport's close, and packets already in the
                // inbound queue still come): the engine gets nothing more, so it writes nothing and
                // arms no timer after `finish()`.
                guard isOpen else { break }
                // Per transport read, not per packet: the packets that arrived with it are taken
                // under one lock and fed at one time (one clock read; the engine checks its timers
                // once), then one drain.
                let now = clock.now
                engine.receive(packet, now: now)
                iterator.takeBuffered(into: &batch)
                for more in batch { engine.receive(more, now: now) }
                batch.removeAll(keepingCapacity: true)
                drain()
                activityTracker?.hostActedOnInbound()
            }
            transportEnded(.closed)
        } catch {
            transportEnded(error)
        }
    }

    /// Acts on everything the engine decided, in order, then arms the timer for its next deadline.
    func drain() {
        while true {
            // Notifications first: the engine's lane holds only what came before every other output
            // (HostEngine+NotificationLane), in small values that cost no enum copies.
            drainNotificationLane()
            guard let output = engine.nextOutput() else { break }
            switch output {
            case .send(let packet):
                activityTracker?.hostQueuedPacket()
                outbound.yield(packet)
            case .completed(let id, let result):
                if let waiter = waiters.removeValue(forKey: id) {
                    waiter.resume(returning: result)
                } else if id == immediateRequest {
                    immediateResult = result
                }
            case .event(let event):
                if case .notification(let connection, let attribute, let value, let isIndication) = event {
                    // One that arrived behind another output.
                    deliver(HostNotification(connection: connection, attribute: attribute, value: value, isIndication: isIndication))
                    continue
                }
                shellTap?(.event(event))
                if scanRecord != nil { scanEvent(event) }
                channelRouter.route(event, host: self)
                if case .connected(let link) = event { linkCameUp(link.handle) }
                if case .disconnected(let handle, let reason) = event {
                    notificationStreams.linkDown(handle)
                    linkRecords.linkEnded(handle, generation: linkGenerations[handle], reason: reason)
                    linkGenerations[handle] = nil
                }
                routePairingPrompt(event)
                for observer in observers.values { observer.yield(event) }
            }
        }
        if !stateWaiters.isEmpty { resumeStateWaiters() }
        if shellWantsDrained { shellTap?(.drained) }
        armTimer()
    }

    /// Delivers every notification on the engine's lane.
    ///
    /// Not inlined into `drain`, on purpose: written there as `while let n = engine.nextNotification()`
    /// before `engine.nextOutput()`, Swift 6.3's release build merged the two accesses to `engine`
    /// into one scope and then began it again on each turn of the loop without ending it, a "Fatal
    /// access conflict" at the second notification (Benchmarks/NotificationPath crashed on it).
    ///
    /// The lane is taken a batch at a time (one access to `engine` per batch, not per notification),
    /// into storage kept between drains. A recipient that makes the engine notify again (through
    /// `performNow`) finds the storage taken and drains with a buffer of its own.
    @inline(never)
    func drainNotificationLane() {
        var batch: [HostNotification] = []
        swap(&batch, &notificationBatch)
        defer { swap(&batch, &notificationBatch) }
        while true {
            engine.takeNotifications(into: &batch)
            if batch.isEmpty { return }
            for notification in batch { deliver(notification) }
        }
    }

    /// The hot path: the handler, the per-handle streams and the observers only (channels and
    /// pairing prompts have nothing to do with a notification).
    func deliver(_ notification: HostNotification) {
        notificationHandler?(notification.connection, GATTNotification(
            handle: notification.attribute, value: notification.value, isIndication: notification.isIndication))
        if !linkRecords.sinks.isEmpty {
            linkRecords.deliver(connection: notification.connection, GATTNotification(
                handle: notification.attribute, value: notification.value, isIndication: notification.isIndication))
        }
        if !notificationStreams.isEmpty {
            notificationStreams.deliver(connection: notification.connection, valueHandle: notification.attribute, value: notification.value)
        }
        if !observers.isEmpty {
            let event = HostEngineEvent.notification(
                connection: notification.connection, attribute: notification.attribute,
                value: notification.value, isIndication: notification.isIndication)
            for observer in observers.values { observer.yield(event) }
        }
    }

    func transportEnded(_ error: TransportError) {
        guard isOpen else { return }
        transportFailure = error
        // Every peer with something under way goes to Error (.transportEnded); observers see it
        // before their streams end.
        engine.transportEnded()
        drain()
        isOpen = false
        finish()
    }

    func finish() {
        for waiter in waiters.values { waiter.resume(returning: .failure(.notRunning)) }
        waiters.removeAll()
        for observer in observers.values { observer.finish() }
        observers.removeAll()
        channelRouter.hostClosed()
        notificationStreams.finishAll()
        linkRecords.hostClosed()
        scanRecord?.registration?.queue.finish(throwing: .notRunning)
        scanRecord = nil
        shellTap?(.finished)
        failStateWaiters()
        timerTask?.cancel()
        timerTask = nil
        outbound.finish()
    }
}
