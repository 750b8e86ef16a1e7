import BluewireHostEngine

extension EngineHost {
    /// Hands `request` to the engine without waiting: its completion, if the engine gave it at once
    /// (a refusal, a notification sent, a reset), or nil if it will come later, when it is dropped.
    /// For the synchronous calls of a `BluetoothHost` on this host's executor (Shell/), such as
    /// `reset(_:)` and `cancelConnectionAttempt()`. It does not start the transport: a host that
    /// resets a peer's machine before `start()` reads nothing from the controller yet.
    func performNow(_ request: HostRequest) -> Result<HostCompletion, HostEngineError>? {
        // Before the first request the transport is not opened for this one: what the engine
        // writes waits in the outbound queue until `perform` opens it. After `close`, refused.
        guard transportFailure == nil, isOpen || readerTask == nil else { return .failure(.notRunning) }
        let id = HostRequestID(nextRequestID)
        nextRequestID &+= 1
        immediateRequest = id
        defer {
            immediateRequest = nil
            immediateResult = nil
        }
        engine.perform(request, id: id, now: clock.now)
        drain()
        return immediateResult
    }
}
