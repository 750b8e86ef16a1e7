import BluewireHostEngine

extension EngineHost {
    /// Hands `request` to the engine without waiting: its completion, if the engine gave it at once
    /// (a refusal, a notification sent, a reset), or nil if it will come later, when it is dropped.
    /// For the synchronous calls of a `BluetoothHost` on this host's executor (Shell/), such as
    /// `reset(_:)` and `cancelConnectionAttempt()`.
    func performNow(_ request: HostRequest) -> Result<HostCompletion, HostEngineError>? {
        if !isOpen { open() }
        guard transportFailure == nil, isOpen else { return .failure(.notRunning) }
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
