import BluewireHostEngine

/// A task waiting in `waitForEngineState` until its condition holds.
struct EngineStateWaiter {
    let condition: @Sendable (HostEngine) -> Bool
    let continuation: CheckedContinuation<Bool, Never>
}

extension EngineHost {
    /// Suspends until `condition` holds of the engine's state; returns false if the host closes (or
    /// its transport ends) first.
    ///
    /// For tests of several hosts, each on its own tasks: what one host does after another's call
    /// returned (the peripheral's side of a pairing, a link coming up on the other end) is awaited
    /// here instead of polled. The engine's state changes only in a drain (every packet, request and
    /// timer ends with one), and the condition is checked at the end of each, so it is seen at the
    /// first drain that makes it true: no polling, no sleep, no guess about when the host is done.
    @_spi(Testing)
    public func waitForEngineState(_ condition: @escaping @Sendable (HostEngine) -> Bool) async -> Bool {
        if condition(engine) { return true }
        guard isOpen else { return false }
        return await withCheckedContinuation { continuation in
            stateWaiters.append(EngineStateWaiter(condition: condition, continuation: continuation))
        }
    }

    /// Resumes the waiters whose condition holds now (the end of a drain).
    func resumeStateWaiters() {
        var index = 0
        while index < stateWaiters.count {
            if stateWaiters[index].condition(engine) {
                stateWaiters.remove(at: index).continuation.resume(returning: true)
            } else {
                index += 1
            }
        }
    }

    /// The host closed: no drain will come.
    func failStateWaiters() {
        let waiters = stateWaiters
        stateWaiters.removeAll()
        for waiter in waiters { waiter.continuation.resume(returning: false) }
    }
}
