import BluewireHostEngine

extension EngineHost {
    /// The values of every Handle Value Notification and Indication `connection`'s peer sends for
    /// `valueHandle` from now on (indications are confirmed by the engine, Core Vol 3 Part F §3.4.7.2),
    /// in arrival order. Registered when this returns; finishes when the link ends or the host closes,
    /// at once for a link that is not up.
    public func notificationValues(connection: UInt16, valueHandle: UInt16) -> AsyncStream<ArraySlice<UInt8>> {
        let (values, continuation) = AsyncStream<ArraySlice<UInt8>>.makeStream(bufferingPolicy: .unbounded)
        guard isOpen, engine.mtu(connection: connection) != nil else {
            continuation.finish()
            return values
        }
        let key = EngineNotificationStreams.Key(connection: connection, valueHandle: valueHandle)
        let id = notificationStreams.add(continuation, for: key)
        continuation.onTermination = { _ in Task { await self.removeNotificationStream(id, for: key) } }
        return values
    }

    func removeNotificationStream(_ id: UInt64, for key: EngineNotificationStreams.Key) {
        notificationStreams.remove(id, for: key)
    }

    /// Like `perform(_:)`, but a cancelled caller is answered at once with `.cancelled` (and nothing is
    /// handed to the engine when it was cancelled before). A `.gatt` operation still waiting in the
    /// link's queue is withdrawn (`.cancelGATT`) and never sent; one already on the air runs to its end,
    /// so the bearer still has one request outstanding at a time (Core Vol 3 Part F §3.3.2), and its
    /// late answer is dropped.
    public func performCancellable(_ request: HostRequest) async -> Result<HostCompletion, HostEngineError> {
        if Task.isCancelled { return .failure(.cancelled) }
        if !isOpen { open() }
        guard transportFailure == nil, isOpen else { return .failure(.notRunning) }
        let id = HostRequestID(nextRequestID)
        nextRequestID &+= 1
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                waiters[id] = continuation
                engine.perform(request, id: id, now: clock.now)
                drain()
            }
        } onCancel: {
            Task { await self.abandon(id, request) }
        }
    }

    /// The caller of `id` stopped waiting: answer it now, and withdraw a GATT operation that has not
    /// started; the engine's completion, if one still comes, finds no waiter.
    func abandon(_ id: HostRequestID, _ request: HostRequest) {
        guard let waiter = waiters.removeValue(forKey: id) else { return }
        waiter.resume(returning: .failure(.cancelled))
        guard case .gatt(let connection, _) = request else { return }
        let withdrawal = HostRequestID(nextRequestID)
        nextRequestID &+= 1
        engine.perform(.cancelGATT(connection: connection, request: id), id: withdrawal, now: clock.now)
        drain()
    }
}
