import BluewireGATT

/// Where the notifications and indications of each link of a `BluetoothHost` on the engine go: its
/// GATT client (for Service Changed, Core Vol 3 Part G §7.1), its `GATTClient` subscriptions and its
/// `Connection.notifications` streams.
///
/// A class of its own, outside the host's actor state, for the hot path: the engine host calls its
/// notification handler synchronously as each packet is decoded, and the handler reads these routes
/// directly. Reaching the host's own state from there would take `Actor.assumeIsolated`, which
/// allocates on every call (Benchmarks/NotificationPath measured two allocations per notification
/// with it, none without).
///
/// Only touched on the host's executor, which the engine host shares (the handler runs in its drain,
/// the host's methods are isolated to it): that is what makes it `@unchecked Sendable`.
final class ShellNotificationRoutes: @unchecked Sendable {
    struct Link {
        /// The link's GATT client session.
        var gattClient: GATTClientSession?
        /// `GATTClient` subscriptions: per value handle, then per registration id.
        var sinks: [UInt16: [UInt64: NotificationSink]] = [:]
        /// `Connection.notifications(valueHandle:)` streams: per value handle, then per subscriber id.
        var subscribers: [UInt16: [UInt64: AsyncStream<GATTNotification>.Continuation]] = [:]
        /// `Connection.notifications()` streams for every handle.
        var allSubscribers: [UInt64: AsyncStream<GATTNotification>.Continuation] = [:]

        /// Registrations and streams on the link (`HostDiagnostics.notificationSubscribers`).
        var count: Int {
            allSubscribers.count + subscribers.values.reduce(0) { $0 + $1.count } + sinks.values.reduce(0) { $0 + $1.count }
        }
    }

    var links: [UInt16: Link] = [:]

    /// One notification or indication from the peer's server on `handle`. Service Changed invalidates
    /// the client's cache before anyone acts on the indication.
    func deliver(_ notification: GATTNotification, on handle: UInt16) {
        guard let index = links.index(forKey: handle) else { return }
        if notification.isIndication, let client = links.values[index].gattClient { client.indicationReceived(notification) }
        if let sinks = links.values[index].sinks[notification.handle] {
            for sink in sinks.values { sink.deliver(notification) }
        }
        if let subscribers = links.values[index].subscribers[notification.handle] {
            for subscriber in subscribers.values { subscriber.yield(notification) }
        }
        for subscriber in links.values[index].allSubscribers.values { subscriber.yield(notification) }
    }

    /// The link ended: every registration and stream on it ends (their consumers get what is buffered).
    func linkDown(_ handle: UInt16) {
        guard let link = links.removeValue(forKey: handle) else { return }
        for subscribers in link.subscribers.values { for subscriber in subscribers.values { subscriber.finish() } }
        for subscriber in link.allSubscribers.values { subscriber.finish() }
        for sinks in link.sinks.values { for sink in sinks.values { sink.queue.finish() } }
    }
}
