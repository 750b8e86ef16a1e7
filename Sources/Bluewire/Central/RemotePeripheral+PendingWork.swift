extension RemotePeripheral {
    /// What a peripheral still holds that a task or a caller waits on: connects under way, tasks
    /// waiting for a link's end, the idle timer, event and subscription sequences, and operations
    /// running or queued. Every count is zero once its host closed and the peripheral heard of it (the
    /// end of its link, or a connect the close failed): a closed host leaves no task, continuation or
    /// timer of the peripheral behind.
    public struct PendingWork: Equatable, Sendable, CustomStringConvertible {
        public var connects: Int
        public var linkWatchers: Int
        public var idleTimerArmed: Bool
        public var eventStreams: Int
        public var subscriptions: Int
        public var operations: Int

        public static let none = PendingWork(
            connects: 0, linkWatchers: 0, idleTimerArmed: false, eventStreams: 0, subscriptions: 0, operations: 0)

        public var description: String {
            "\(connects) connect(s), \(linkWatchers) link watcher(s), idle timer \(idleTimerArmed ? "armed" : "off"), "
                + "\(eventStreams) event stream(s), \(subscriptions) subscription(s), \(operations) operation(s)"
        }
    }

    public var pendingWork: PendingWork {
        get async {
            let running = await queue.runningID == nil ? 0 : 1
            return PendingWork(
                connects: connectsUnderWay, linkWatchers: linkWatchers, idleTimerArmed: idleTimer.task != nil,
                eventStreams: observers.count, subscriptions: subscriptions.count,
                operations: running + (await queue.queuedIDs.count))
        }
    }

    /// Whether the host closed (or its transport ended); the first time it is seen, ends what waits
    /// on this peripheral that only a link could have answered: the idle timer, the subscriptions'
    /// sequences and the event streams. The operations queued fail by themselves (a connect on a
    /// closed host fails at once), or through `failAll` when the link's end says the host closed.
    @discardableResult
    func hostMayHaveEnded() async -> Bool {
        if hostEnded { return true }
        guard await host.hasEnded else { return false }
        hostEnded = true
        stopIdleTimer()
        for state in subscriptions.values { state.continuation.finish() }
        subscriptions.removeAll()
        for observer in observers.values { observer.finish() }
        observers.removeAll()
        return true
    }
}
