extension EngineHost {
    /// What a host still holds that someone waits on: callers of `perform`, event streams, state
    /// waiters and the timer task. Every count is zero once `close()` returned (or the transport
    /// ended): a closed host leaves no task, continuation or timer behind.
    public struct PendingWork: Equatable, Sendable, CustomStringConvertible {
        public var requests: Int
        public var eventStreams: Int
        public var stateWaiters: Int
        public var timerArmed: Bool

        public static let none = PendingWork(requests: 0, eventStreams: 0, stateWaiters: 0, timerArmed: false)

        public var description: String {
            "\(requests) request(s), \(eventStreams) event stream(s), \(stateWaiters) state waiter(s), timer \(timerArmed ? "armed" : "off")"
        }
    }

    public var pendingWork: PendingWork {
        PendingWork(requests: waiters.count, eventStreams: observers.count, stateWaiters: stateWaiters.count, timerArmed: timerTask != nil)
    }
}

extension EngineHost {
    /// Closed, or its transport ended: no request will run again (a closed host never reopens).
    var hasEnded: Bool { isClosed || transportFailure != nil }
}
