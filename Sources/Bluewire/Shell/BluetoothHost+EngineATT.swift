import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine

extension BluetoothHost {
    /// `Connection.request(_:)`: the engine's `.attRequest`, queued behind the
    /// link's other client operations (one request outstanding per bearer, Core Vol 3 Part F §3.3.2)
    /// under its 30 s transaction timeout (§3.3.3). A cancelled caller is answered at once; a request
    /// still queued is withdrawn, one on the air runs to its end and its late answer is dropped.
    func engineATTRequest(_ engineHost: EngineHost, _ pdu: ATTPDU, on handle: UInt16) async throws(ConnectionError) -> ATTPDU {
        guard shell.links[handle] != nil else { throw .disconnected(endedReason(handle)) }
        switch await engineHost.performCancellable(.gatt(connection: handle, .attRequest(pdu))) {
        case .success(.attResponse(let answer)): return answer
        case .success(let other): throw .gatt("unexpected completion \(other)")
        case .failure(let error): throw engineConnectionError(error, handle: handle)
        }
    }

    /// `Connection.send(command:)`: sent at once, in order, not held back by an
    /// outstanding request (commands have no response, §3.4.5.3).
    func engineATTCommand(_ engineHost: EngineHost, _ pdu: ATTPDU, on handle: UInt16) async throws(ConnectionError) {
        guard shell.links[handle] != nil else { throw .disconnected(endedReason(handle)) }
        if case .failure(let error) = await engineHost.performCancellable(.gatt(connection: handle, .attCommand(pdu))) {
            throw engineConnectionError(error, handle: handle)
        }
    }

    /// `Connection.exchangeMTU()`: the engine's Exchange MTU (§3.4.2) with the
    /// host's preferred MTU. An Error Response is thrown as `.attError`.
    func engineExchangeMTU(_ engineHost: EngineHost, on handle: UInt16) async throws(ConnectionError) -> Int {
        guard shell.links[handle] != nil else { throw .disconnected(endedReason(handle)) }
        switch await engineHost.performCancellable(.gatt(connection: handle, .exchangeMTU)) {
        case .success(.mtu(let mtu)): return mtu
        case .success: return engineMTU(engineHost, on: handle)
        case .failure(.gatt(.errorResponse(let code, let request, let attHandle))):
            throw .attError(code, request: request, handle: attHandle)
        case .failure(let error): throw engineConnectionError(error, handle: handle)
        }
    }

    /// The link's ATT_MTU in the engine (23 until an exchange, and once the link is gone).
    func engineMTU(_ engineHost: EngineHost, on handle: UInt16) -> Int {
        engineHost.onSharedExecutor(passing: handle) { $0.engine.mtu(connection: $1) } ?? ATTBearer.defaultMTU
    }

    /// The engine's error as a `Connection`'s: a link that is gone reports why it ended.
    func engineConnectionError(_ error: HostEngineError, handle: UInt16) -> ConnectionError {
        switch error {
        case .disconnected(let reason): .disconnected(reason)
        case .unknownConnection, .notRunning, .transportEnded: .disconnected(endedReason(handle))
        case .att(let bearer): .att(bearer)
        case .gatt(.errorResponse(let code, let request, let attHandle)): .attError(code, request: request, handle: attHandle)
        case .refused(let state, let trigger): .refused(ConnectionTriggerRefused(state: state, trigger: trigger))
        case .cancelled: .cancelled
        default: .gatt("\(error)")
        }
    }

    // MARK: notifications

    /// `Connection.notifications(valueHandle:)`.
    func engineSubscribe(on handle: UInt16, valueHandle: UInt16?) -> AsyncStream<GATTNotification> {
        let (stream, continuation) = AsyncStream<GATTNotification>.makeStream(bufferingPolicy: .unbounded)
        guard shell.links[handle] != nil else {
            continuation.finish()
            return stream
        }
        let id = nextObserverID
        nextObserverID += 1
        if let valueHandle {
            notificationRoutes.links[handle]?.subscribers[valueHandle, default: [:]][id] = continuation
        } else {
            notificationRoutes.links[handle]?.allSubscribers[id] = continuation
        }
        continuation.onTermination = { _ in Task { await self.engineUnsubscribe(handle, valueHandle, id) } }
        return stream
    }

    func engineUnsubscribe(_ handle: UInt16, _ valueHandle: UInt16?, _ id: UInt64) {
        if let valueHandle {
            notificationRoutes.links[handle]?.subscribers[valueHandle]?[id] = nil
        } else {
            notificationRoutes.links[handle]?.allSubscribers[id] = nil
        }
    }

    /// Installs the engine host's notification handler: every notification and confirmed indication
    /// goes to this host's routes synchronously, on the executor the two share, as its packet is
    /// decoded (ShellNotificationRoutes: no actor state and no allocation on the way). The routes are
    /// held strongly (no weak load per notification): they hold nothing that leads back to the host.
    func installNotificationRoute(_ engineHost: EngineHost) {
        let route: @Sendable (UInt16, GATTNotification) -> Void = { [routes = notificationRoutes] handle, notification in
            routes.deliver(notification, on: handle)
        }
        engineHost.onSharedExecutor(passing: route) { $0.setNotificationHandler($1) }
    }
}
