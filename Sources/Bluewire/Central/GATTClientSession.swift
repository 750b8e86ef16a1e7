import BluewireCore
import BluewireGATT
import BluewireHCI
import Synchronization

/// What one connection's GATT client keeps between operations: its operation queue, the discovered
/// database, the live subscriptions, the state machine's transitions and, once the link is gone, why.
///
/// Shared by the Host (which records transitions, Service Changed indications and the disconnection
/// on its executor, synchronously, so nothing acts on stale state) and the operations running on the
/// queue; a mutex keeps each access short and consistent.
final class GATTClientSession: Sendable {
    struct Subscription {
        var characteristic: GATTCharacteristic
        var descriptorHandle: UInt16
    }

    struct State {
        var cache = GATTClientCache()
        var includes: [UInt16: [GATTIncludedService]] = [:]
        var connectionState: ConnectionState
        var disconnection: HCIStatus?
        /// The ATT bearer failed (a transaction timeout, Core Vol 3 Part F §3.3.3) while this operation
        /// was using it: its request got that error, and the link drop that follows must not replace it.
        var bearerFailure: (operation: OperationID, error: OperationError)?
        var subscriptions: [UInt64: Subscription] = [:]
        var transitionObservers: [UInt64: AsyncStream<ConnectionTransition>.Continuation] = [:]
        var serviceChangeObservers: [UInt64: AsyncStream<ClosedRange<UInt16>>.Continuation] = [:]
        var nextObserverID: UInt64 = 1
    }

    let connection: Connection
    let queue: GATTOperationQueue
    private let state: Mutex<State>

    init(connection: Connection, state connectionState: ConnectionState) {
        self.connection = connection
        // On the host's executor: the host fails the queue's operations synchronously when the link drops.
        self.queue = GATTOperationQueue(performer: connection, sharingExecutorWith: connection.host)
        self.state = Mutex(State(connectionState: connectionState))
    }

    /// The host counts live sessions (`HostDiagnostics.liveGATTSessions`); a test waiting on that count
    /// learns of this one's end here.
    deinit { connection.host.gattSessionReleased() }

    func withState<R>(_ body: (inout State) -> R) -> R {
        state.withLock { body(&$0) }
    }

    var cache: GATTClientCache { withState { $0.cache } }
    var disconnection: HCIStatus? { withState { $0.disconnection } }
    var connectionState: ConnectionState { withState { $0.connectionState } }

    // MARK: Host hooks (called on the Host's executor)

    /// The state machine took a transition. A Failure because the ATT bearer cannot be used any more
    /// (`cause` `.gatt(.bearer(.transactionTimeout))`) is remembered with the operation running
    /// now, whose request it failed: the engine drops the link next (§3.3.3), and that operation's
    /// caller must hear the bearer's error, not the disconnection it caused. The queue starts nothing
    /// more until then: the operations behind it fail with the disconnection.
    func record(_ transition: ConnectionTransition, cause: ConnectionFailureCause? = nil) {
        // Only the transaction timeout: the engine sends Disconnect right after it (HostEngine+ACL),
        // so what the queue holds is answered at the link's end.
        var bearerFailure: OperationError?
        if transition.trigger == .failure, case .gatt(.bearer(.transactionTimeout))? = cause { bearerFailure = .bearer(.transactionTimeout) }
        // The engine is dropping the link: what is queued waits for its end (recordDisconnection).
        let running = bearerFailure == nil ? nil : queue.assumeIsolated { queue in
            queue.holdQueued()
            return queue.runningID
        }
        let observers = withState { state in
            state.connectionState = transition.to
            if let bearerFailure, let running { state.bearerFailure = (running, bearerFailure) }
            return Array(state.transitionObservers.values)
        }
        for observer in observers { observer.yield(transition) }
    }

    /// The link is going: remember why (operations and subscriptions that end now or start later
    /// report this reason) and fail every queued and running operation at once: with the
    /// disconnection, except an operation whose request the bearer failed (`record(_:cause:)`),
    /// which gets that error, as it would have had the link stayed up a moment longer.
    func recordDisconnection(reason: HCIStatus) {
        let (first, bearerFailure) = withState { state in
            defer { state.disconnection = state.disconnection ?? reason }
            return (state.disconnection == nil, state.bearerFailure)
        }
        guard first else { return }
        // The queue runs on the host's executor, which this is called on: every caller is answered now.
        queue.assumeIsolated {
            $0.failAll(with: .disconnected(reason: reason.rawValue), running: bearerFailure.map { ($0.operation, $0.error) })
        }
    }

    /// The link is gone and its state machine has taken its last transition: end the observers.
    func linkDisconnected() {
        let (transitions, changes) = withState { state in
            state.subscriptions.removeAll()
            defer {
                state.transitionObservers.removeAll()
                state.serviceChangeObservers.removeAll()
            }
            return (Array(state.transitionObservers.values), Array(state.serviceChangeObservers.values))
        }
        for observer in transitions { observer.finish() }
        for observer in changes { observer.finish() }
    }

    /// An indication arrived: if it is the Service Changed characteristic's, drop what it invalidates
    /// from the cache and tell the observers which range to rediscover (Core Vol 3 Part G §7.1).
    func indicationReceived(_ notification: GATTNotification) {
        let (range, observers): (ClosedRange<UInt16>?, [AsyncStream<ClosedRange<UInt16>>.Continuation]) = withState { state in
            guard let handle = state.cache.serviceChangedValueHandle, handle == notification.handle,
                  let changed = try? ServiceChanged(value: notification.value)
            else { return (nil, []) }
            let range = state.cache.invalidate(changed.range)
            state.includes = state.includes.filter { !range.contains($0.key) }
            return (range, Array(state.serviceChangeObservers.values))
        }
        guard let range else { return }
        for observer in observers { observer.yield(range) }
    }

    // MARK: Observers

    func transitions() -> AsyncStream<ConnectionTransition> {
        let (stream, continuation) = AsyncStream<ConnectionTransition>.makeStream(bufferingPolicy: .unbounded)
        let registered = withState { state -> UInt64? in
            guard state.disconnection == nil else { return nil }
            let id = state.nextObserverID
            state.nextObserverID += 1
            state.transitionObservers[id] = continuation
            return id
        }
        guard let id = registered else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in self?.withState { _ = $0.transitionObservers.removeValue(forKey: id) } }
        return stream
    }

    func serviceChanges() -> AsyncStream<ClosedRange<UInt16>> {
        let (stream, continuation) = AsyncStream<ClosedRange<UInt16>>.makeStream(bufferingPolicy: .unbounded)
        let registered = withState { state -> UInt64? in
            guard state.disconnection == nil else { return nil }
            let id = state.nextObserverID
            state.nextObserverID += 1
            state.serviceChangeObservers[id] = continuation
            return id
        }
        guard let id = registered else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in self?.withState { _ = $0.serviceChangeObservers.removeValue(forKey: id) } }
        return stream
    }
}

extension GATTClientCache {
    /// Whether `characteristic` is one this cache holds (same declaration, value handle and UUID).
    func contains(_ characteristic: GATTCharacteristic) -> Bool {
        characteristics.values.contains { list in
            list.contains {
                $0.handle == characteristic.handle && $0.valueHandle == characteristic.valueHandle && $0.uuid == characteristic.uuid
            }
        }
    }

    /// The cached characteristic whose declaration or value handle is `handle`.
    func characteristic(at handle: UInt16) -> GATTCharacteristic? {
        for list in characteristics.values {
            if let found = list.first(where: { $0.valueHandle == handle || $0.handle == handle }) { return found }
        }
        return nil
    }

    /// The cached Client Characteristic Configuration descriptor of `characteristic`, if discovered.
    func clientConfigurationHandle(of characteristic: GATTCharacteristic) -> UInt16? {
        descriptors[characteristic.handle]?.first { $0.uuid == .clientCharacteristicConfiguration }?.handle
    }
}
