import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine

// `GATTClient`. Its operations run unchanged on the connection's
// `GATTOperationQueue`, their requests through the engine's `.attRequest` (BluetoothHost+EngineATT);
// what changes is who moves the peer's state machine: the engine. A `GATTClient.phase` begins and ends
// an application phase there (`.beginGATTPhase`/`.endGATTPhase`, HostEngine+AppPhases), and a
// subscription's CCCD write is the engine's `.subscribe`/`.unsubscribe`, which fire Write,
// OperationCompleted and EnableNotifications/DisableNotifications as the table says. The session
// records the transitions the engine reports (`.stateChanged`).

extension BluetoothHost {
    /// The GATT client session of `connection`; for a link that is gone, one
    /// that fails every operation with the reason.
    func engineGATTClientSession(for connection: Connection) -> GATTClientSession {
        if isLive(connection), let session = shell.links[connection.handle]?.gattClient {
            return session
        }
        let session = GATTClientSession(connection: connection, state: .initial)
        session.recordDisconnection(reason: endedLinks[connection.handle] ?? .unknownConnectionIdentifier)
        session.linkDisconnected()
        return session
    }

    /// `fireGATTTrigger`: a phase's trigger begins an application phase, and
    /// OperationCompleted or Failure ends it.
    /// - Throws: `.refused` naming state and trigger, or `.disconnected` when the link is gone.
    func engineFireGATTTrigger(
        _ engineHost: EngineHost, _ trigger: ConnectionTrigger, on connection: Connection, cause: ConnectionFailureCause?
    ) throws(GATTError) {
        guard isLive(connection), let link = shell.links[connection.handle] else {
            throw .disconnected(endedReason(connection.handle))
        }
        let handle = connection.handle
        let request: HostRequest
        switch trigger {
        case .discoverServices: request = .beginGATTPhase(connection: handle, .discoverServices)
        case .discoverCharacteristics: request = .beginGATTPhase(connection: handle, .discoverCharacteristics)
        case .read: request = .beginGATTPhase(connection: handle, .read)
        case .write: request = .beginGATTPhase(connection: handle, .write)
        case .operationCompleted: request = .endGATTPhase(connection: handle, failure: nil)
        case .failure: request = .endGATTPhase(connection: handle, failure: Self.engineCause(cause))
        default:
            let state = engineHost.onSharedExecutor(passing: link.peer) { $0.engine.state(of: $1) }
            throw .refused(ConnectionTriggerRefused(state: state, trigger: trigger))
        }
        switch enginePerformNow(engineHost, request) {
        case .success, nil: return
        case .failure(let error): throw engineGATTError(error, handle: handle, disconnection: link.gattClient?.disconnection)
        }
    }

    /// A GATT phase's failure cause as the engine records it: a bearer that cannot be used any more.
    static func engineCause(_ cause: ConnectionFailureCause?) -> HostEngineError {
        if case .gatt(.bearer(let error)) = cause { return .att(error) }
        return .att(.closed)
    }

    /// Writes a CCCD through the engine (`.subscribe` or `.unsubscribe`), which moves the peer's
    /// machine (Write, OperationCompleted, then EnableNotifications or DisableNotifications). Returns
    /// the descriptor handle written.
    func engineConfigure(_ request: GATTClientRequest, on connection: Connection) async throws(GATTError) -> UInt16 {
        guard isLive(connection) else {
            throw .disconnected(endedReason(connection.handle))
        }
        switch await engineHost.performCancellable(.gatt(connection: connection.handle, request)) {
        case .success(.configured(let descriptorHandle)): return descriptorHandle
        case .success(let other): throw .operationFailed("unexpected completion \(other)")
        case .failure(let error):
            throw engineGATTError(error, handle: connection.handle, disconnection: shell.links[connection.handle]?.gattClient?.disconnection)
        }
    }

    /// The engine's error as a `GATTError`: a link that is gone reports why it ended.
    func engineGATTError(_ error: HostEngineError, handle: UInt16, disconnection: HCIStatus?) -> GATTError {
        switch error {
        case .refused(let state, let trigger): .refused(ConnectionTriggerRefused(state: state, trigger: trigger))
        case .gatt(let failure): .procedure(failure)
        case .att(.disconnected): .disconnected(disconnection ?? endedReason(handle))
        case .att(let bearer): .bearer(bearer)
        case .disconnected(let reason): .disconnected(disconnection ?? reason)
        case .unknownConnection, .notRunning, .transportEnded: .disconnected(disconnection ?? endedReason(handle))
        case .cancelled: disconnection.map { .disconnected($0) } ?? .cancelled
        default: .operationFailed("\(error)")
        }
    }

    // MARK: notification registrations

    /// `registerNotifications`.
    func engineRegisterNotifications(
        on connection: Connection, valueHandle: UInt16, handler: (@Sendable (GATTNotification) -> Void)?
    ) -> (registration: NotificationRegistration, id: UInt64)? {
        guard isLive(connection) else { return nil }
        let queue = NotificationQueue()
        let id = nextObserverID
        nextObserverID += 1
        notificationRoutes.links[connection.handle]?.sinks[valueHandle, default: [:]][id] = NotificationSink(queue: queue, handler: handler)
        let handle = connection.handle
        let registration = NotificationRegistration(queue: queue) { [weak self] in
            guard let self else { return }
            Task { await self.endNotifications(handle: handle, valueHandle: valueHandle, id: id) }
        }
        return (registration, id)
    }

    /// `endNotifications`.
    func engineEndNotifications(handle: UInt16, valueHandle: UInt16, id: UInt64) {
        guard shell.links[handle] != nil else { return }
        notificationRoutes.links[handle]?.sinks[valueHandle]?.removeValue(forKey: id)?.queue.finish()
        if notificationRoutes.links[handle]?.sinks[valueHandle]?.isEmpty == true { notificationRoutes.links[handle]?.sinks[valueHandle] = nil }
    }
}
