import BluewireCore
import BluewireHostEngine
import BluewireGATT
import BluewireHCI

/// One remote peripheral, known by its address, with an operation queue that outlives its
/// connections: operations queued while the link is down wait for (or, with auto-connect, bring up)
/// the next one.
///
/// An `EngineConnection`'s `EngineGATTClient` queue dies with its connection handle; this one belongs to the peer.
/// Every operation submitted here runs alone on the peripheral's queue (a composite such as a
/// firmware update holds it from start to end), wrapped by the attached decorators:
///
/// - ``attachAutoConnect(resumeAttempts:idleDisconnect:)`` (outermost): connects on demand through
///   `EngineHost.connect(to:)`, exchanges MTUs, re-enables the subscriptions still wanted, and
///   re-resolves characteristics by UUID on every new link (handles may differ from one connection to
///   the next). An operation the link dropped under is run again on a new link, up to
///   `resumeAttempts` times. With `idleDisconnect`, the link is released once nothing has been
///   queued for that long, measured on the host's clock (virtual time in tests).
/// - ``attach(_:)``: any `OperationQueueDecorator`, e.g. `AutoAuthorizeDecorator` with the
///   application's `OperationAuthorizer` (`SecurityManagerAuthorizer` pairs or encrypts through the Security Manager).
///
/// Without auto-connect, call ``connect()`` first; when the link drops, every queued and running
/// operation fails at once with ``RemotePeripheralError/disconnected(_:)`` (none hangs), and later
/// ones with ``RemotePeripheralError/notConnected`` until the next `connect()`.
///
/// ```swift
/// let thermometer = RemotePeripheral(host: host, peer: address)
/// await thermometer.attachAutoConnect(resumeAttempts: 2, idleDisconnect: .seconds(30))
/// let value = try await thermometer.read(temperature, timeout: .seconds(5), retries: 2)
/// ```
///
/// The link is the host's own: its state machine, `EngineGATTClient` and connection events are those of
/// any central connection (`link?.gatt`).
public actor RemotePeripheral: ConnectionEstablisher {
    /// How connections to the peripheral are made.
    public struct Configuration: Sendable {
        /// The connection parameters asked for (LE Create Connection).
        public var connectionParameters: LEConnectionParameters
        /// How long one connection attempt may take (nil: the host configuration's).
        public var connectionTimeout: TimeSpan?
        /// Whether to exchange MTUs right after connecting (Core Vol 3 Part F §3.4.2), so values and
        /// notifications longer than 20 octets fit.
        public var exchangeMTU: Bool

        public init(
            connectionParameters: LEConnectionParameters = LEConnectionParameters(),
            connectionTimeout: TimeSpan? = nil,
            exchangeMTU: Bool = true
        ) {
            self.connectionParameters = connectionParameters
            self.connectionTimeout = connectionTimeout
            self.exchangeMTU = exchangeMTU
        }
    }

    /// The host the peripheral is reached through.
    public nonisolated let host: EngineHost
    /// The peripheral's address (an identity address, or the random static address it advertises with).
    public nonisolated let peer: BluetoothAddress
    public nonisolated let configuration: Configuration
    /// The peripheral's operation queue (submit custom operations with `run(_:)`; cancel with
    /// `queue.cancel(_:)`).
    public nonisolated let queue: GATTOperationQueue

    nonisolated let slot: RemotePeripheralLinkSlot
    var autoConnect = false
    var idleTimeout: Duration?
    var idleTimer: (generation: UInt64, task: Task<Void, Never>?) = (0, nil)
    var activeOperations = 0
    var disconnecting: Task<Void, Never>?
    /// The link `dropLink` is ending (its end is no failure for the queued operations).
    var droppingLink: Int?
    var subscriptions: [UInt64: RemoteSubscriptionState] = [:]
    var nextID: UInt64 = 1
    var observers: [UInt64: AsyncStream<RemotePeripheralEvent>.Continuation] = [:]
    /// Connects under way (`establishLinkIfNeeded`) and tasks waiting for a link's end (`watch`), for
    /// `pendingWork`.
    var connectsUnderWay = 0
    var linkWatchers = 0
    /// The host closed (or its transport ended): nothing can connect again, so nothing is kept waiting.
    var hostEnded = false
    /// How many links this peripheral has had.
    public private(set) var connectionCount = 0
    /// Why the last link ended, if one has.
    public private(set) var lastDisconnection: HCIStatus?

    public init(host: EngineHost, peer: BluetoothAddress, configuration: Configuration = Configuration()) {
        self.host = host
        self.peer = peer
        self.configuration = configuration
        let slot = RemotePeripheralLinkSlot()
        self.slot = slot
        self.queue = GATTOperationQueue(performer: RemotePeripheralBearer(slot: slot), sharingExecutorWith: host)
    }

    /// A peripheral released by the application ends its event and subscription sequences: nothing
    /// else could (it hears of its host's close only through a link's end or a connect, and one with
    /// neither never does), and a consumer still iterating one would wait for ever, its task and
    /// everything it holds never freed (LeakSanitizer found such a consumer after the hosts closed).
    deinit {
        for observer in observers.values { observer.finish() }
        for state in subscriptions.values { state.continuation.finish() }
    }

    /// The peripheral reached through `host`'s engine (the links are the engine's; `host` sees them
    /// as its own connections).
    public init(host: BluetoothHost, peer: BluetoothAddress, configuration: Configuration = Configuration()) {
        self.init(host: host.engineHost, peer: peer, configuration: configuration)
    }

    /// The link now, if any. For authorizers and custom operations running inside one of this
    /// peripheral's operations (which must not queue on the peripheral: that would wait for itself).
    public nonisolated var link: RemotePeripheralLink? { slot.link }

    /// Whether there is a link now.
    public var isConnected: Bool {
        get async {
            guard let link = slot.link else { return false }
            return await link.connection.isConnected
        }
    }

    // MARK: Decorators

    /// Attaches auto-connect (outermost, so the link is up before any other decorator runs): every
    /// operation submitted from now on connects first if there is no link; one the link drops under
    /// is run again on a new link up to `resumeAttempts` times; and with `idleDisconnect`, the link is
    /// released once no operation has run for that long (on the host's clock).
    public func attachAutoConnect(resumeAttempts: Int = 0, idleDisconnect: Duration? = nil) async {
        autoConnect = true
        idleTimeout = idleDisconnect
        // Weakly: the queue holds the decorator and the peripheral holds the queue, so a strong
        // establisher would keep the peripheral, its queue and its parked worker task alive for ever.
        await queue.attach(AutoConnectDecorator(establisher: WeakRemotePeripheral(self), resumeAttempts: resumeAttempts), outermost: true)
    }

    /// Attaches a decorator (innermost of those attached so far) to the operations submitted from now on.
    public func attach(_ decorator: any OperationQueueDecorator) async {
        await queue.attach(decorator)
    }

    // MARK: Events

    /// Every event from now on (connections, reconnections, disconnections, idle disconnects), until
    /// the host closes: the sequence then ends (at once, for one asked for after that).
    public func events() -> AsyncStream<RemotePeripheralEvent> {
        let (stream, continuation) = AsyncStream<RemotePeripheralEvent>.makeStream(bufferingPolicy: .unbounded)
        if hostEnded {
            continuation.finish()
            return stream
        }
        let id = nextID
        nextID += 1
        observers[id] = continuation
        // Weakly: the peripheral holds the continuation, so a strong capture would keep it alive for
        // as long as the sequence is not ended (for ever, for a consumer that waits on it).
        continuation.onTermination = { [weak self] _ in Task { await self?.removeObserver(id) } }
        return stream
    }

    private func removeObserver(_ id: UInt64) { observers[id] = nil }

    func emit(_ event: RemotePeripheralEvent) {
        for observer in observers.values { observer.yield(event) }
    }

    // MARK: The link

    /// Returns once there is a link: the current one, or a new one (connect, MTU exchange, the
    /// wanted subscriptions enabled again). `AutoConnectDecorator` calls this before each operation.
    public func ensureConnected() async throws(OperationError) {
        do throws(RemotePeripheralError) {
            try await establishLinkIfNeeded()
        } catch {
            throw OperationError(error)
        }
    }

    func establishLinkIfNeeded() async throws(RemotePeripheralError) {
        if let disconnecting { await disconnecting.value }
        if let link = slot.link, await link.connection.isConnected { return }
        slot.link = nil
        emit(.connecting)
        let connection: EngineConnection
        connectsUnderWay += 1
        defer { connectsUnderWay -= 1 }
        do {
            // A peer whose last link failed (a connect timeout, an ATT timeout, a controller error)
            // is in Error, where the host refuses Connect until Reset. Asking this object for a link
            // is the application's decision to start over, so it resets the peer first.
            if await host.state(of: peer) == .error { try await host.reset(peer) }
            connection = try await host.connect(
                to: peer, parameters: configuration.connectionParameters, timeout: configuration.connectionTimeout)
        } catch {
            // The host closed under the attempt (its close fails every request): no link will come.
            if error == .notRunning { await hostMayHaveEnded() }
            throw .connectionFailed(error)
        }
        let gatt = await connection.gatt
        connectionCount += 1
        let link = RemotePeripheralLink(connection: connection, gatt: gatt, number: connectionCount)
        slot.link = link
        watch(link)
        if configuration.exchangeMTU {
            do {
                try await gatt.exchangeMTU()
            } catch where error.isDisconnection {
                throw RemotePeripheralError(error)
            } catch {
                // A server that refuses the exchange keeps ATT_MTU 23 (Core Vol 3 Part F §3.4.2.1).
            }
        }
        emit(.connected(connection, count: connectionCount))
        try await resubscribe(on: link)
    }

    /// Hears when `connection` ends: forgets the link and, without auto-connect, fails what is queued.
    private func watch(_ link: RemotePeripheralLink) {
        linkWatchers += 1
        Task {
            let reason = await link.connection.disconnection()
            await self.linkEnded(link.number, reason: reason)
        }
    }

    private func linkEnded(_ number: Int, reason: HCIStatus) async {
        // Compared by number: a new connection may reuse the handle, so `EngineConnection`s compare equal.
        linkWatchers -= 1
        if slot.link?.number == number { slot.link = nil }
        // No link to release any more: an idle timer left running would sleep on the host's clock
        // for ever once the host closed.
        stopIdleTimer()
        lastDisconnection = reason
        for id in subscriptions.keys { subscriptions[id]?.active = nil }
        emit(.disconnected(reason: reason))
        // The host closed (which ends every link): nothing will reconnect, whatever is attached.
        if await hostMayHaveEnded() {
            await queue.failAll(with: .disconnected(reason: reason.rawValue))
            return
        }
        // Asked for (`disconnect()`, the idle timer): what is queued runs next, connecting if it may.
        guard !autoConnect, droppingLink != number else { return }
        // Nothing will bring the link back: answer everyone now.
        for state in subscriptions.values { state.continuation.finish() }
        subscriptions.removeAll()
        await queue.failAll(with: .disconnected(reason: reason.rawValue))
    }

    /// Disconnects the current link (if any) and waits for Disconnection Complete.
    func dropLink(reason: HCIStatus) async {
        guard let link = slot.link else { return }
        slot.link = nil
        droppingLink = link.number
        let task = Task { _ = try? await link.connection.disconnect(reason: reason) }
        disconnecting = Task { await task.value }
        await task.value
        disconnecting = nil
    }
}

/// A `RemotePeripheral` as its own queue's `ConnectionEstablisher`, held weakly (see `attachAutoConnect`).
/// A peripheral already released has no link to bring up.
struct WeakRemotePeripheral: ConnectionEstablisher {
    weak var peripheral: RemotePeripheral?

    init(_ peripheral: RemotePeripheral) { self.peripheral = peripheral }

    func ensureConnected() async throws(OperationError) {
        guard let peripheral else { throw .notConnected }
        try await peripheral.ensureConnected()
    }

    func operationStarted() async { await peripheral?.operationStarted() }

    func operationEnded() async { await peripheral?.operationEnded() }
}
