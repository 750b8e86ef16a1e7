/// Where one registration's notifications go: its queue, or, for a subscriber that gave a handler,
/// straight into the handler on the host's executor (the queue then only carries the end).
struct NotificationSink {
    let queue: NotificationQueue
    let handler: (@Sendable (GATTNotification) -> Void)?

    @inline(__always)
    func deliver(_ notification: GATTNotification) {
        if let handler { handler(notification) } else { queue.yield(notification) }
    }
}

/// Ends a registration once the last copy of its subscription (and of its iterators) is gone, so
/// that a subscriber who simply stops reading does not leave the Host buffering for it forever.
final class NotificationRegistration: Sendable {
    let queue: NotificationQueue
    private let end: @Sendable () -> Void

    init(queue: NotificationQueue, end: @escaping @Sendable () -> Void) {
        self.queue = queue
        self.end = end
    }

    deinit { end() }
}
