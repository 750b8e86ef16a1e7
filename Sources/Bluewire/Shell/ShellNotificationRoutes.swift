import BluewireGATT

/// Where the notifications and indications of each link of a `BluetoothHost` go: its GATT client
/// (for Service Changed, Core Vol 3 Part G §7.1), its `GATTClient` subscriptions and its
/// `Connection.notifications` streams.
///
/// A class of its own, outside the host's actor state, for the hot path: the engine host calls its
/// notification handler synchronously as each packet is decoded, and the handler reads these routes
/// directly. Reaching the host's own state from there would take `Actor.assumeIsolated`, which
/// allocates on every call (Benchmarks/NotificationPath measured two allocations per notification
/// with it, none without).
///
/// Registrations are kept per link and value handle (`links`), and flattened into short arrays
/// whenever they change: a notification walks them, with no dictionary lookup and no copy of a
/// link's registrations (NotificationPath measured the walk of
/// the nested dictionaries at about a third of the host's time per notification).
///
/// The routes hold the link's GATT client weakly, so the engine host's handler can hold the routes
/// strongly: the client refers to its `Connection`, hence to the host, which owns the engine host.
///
/// Only touched on the host's executor, which the engine host shares (the handler runs in its drain,
/// the host's methods are isolated to it): that is what makes it `@unchecked Sendable`.
final class ShellNotificationRoutes: @unchecked Sendable {
    struct Link {
        /// The link's GATT client session.
        weak var gattClient: GATTClientSession?
        /// `GATTClient` subscriptions: per value handle, then per registration id.
        var sinks: [UInt16: [UInt64: NotificationSink]] = [:]
        /// `Connection.notifications(valueHandle:)` streams: per value handle, then per subscriber id.
        var subscribers: [UInt16: [UInt64: AsyncStream<GATTNotification>.Continuation]] = [:]
        /// `Connection.notifications()` streams for every handle.
        var allSubscribers: [UInt64: AsyncStream<GATTNotification>.Continuation] = [:]

        init(gattClient: GATTClientSession? = nil) {
            self.gattClient = gattClient
        }

        /// Registrations and streams on the link (`HostDiagnostics.notificationSubscribers`).
        var count: Int {
            allSubscribers.count + subscribers.values.reduce(0) { $0 + $1.count } + sinks.values.reduce(0) { $0 + $1.count }
        }
    }

    /// A `GATTClient` subscription of value handle `valueHandle` on link `link`.
    struct SinkRoute {
        let link: UInt16
        let valueHandle: UInt16
        let sink: NotificationSink
    }

    /// A `Connection.notifications` stream on link `link`, of value handle `valueHandle` (of every
    /// handle when nil).
    struct StreamRoute {
        let link: UInt16
        let valueHandle: UInt16?
        let continuation: AsyncStream<GATTNotification>.Continuation
    }

    /// The GATT client of link `link`, which takes indications (Service Changed).
    struct ClientRoute {
        let link: UInt16
        let client: WeakGATTClientSession
    }

    /// The registrations, by link. Every change rebuilds the flat routes below.
    var links: [UInt16: Link] = [:] {
        didSet {
            rebuildRoutes()
            onChange?()
        }
    }

    /// Called after every change of `links` while a test waits for the host's counts
    /// (`BluetoothHost.waitForDiagnostics`); nil otherwise.
    var onChange: (@Sendable () -> Void)?

    /// Every registration of every link, flattened: what a notification walks. One array per kind
    /// of recipient, so the walk copies no enum of the three, and an `AsyncStream` continuation
    /// (a resilient type, copied through its value witnesses) is touched only when there is one.
    private(set) var clientRoutes: [ClientRoute] = []
    private(set) var sinkRoutes: [SinkRoute] = []
    private(set) var streamRoutes: [StreamRoute] = []

    /// One notification or indication from the peer's server on `handle`, to the link's GATT client
    /// (indications: Service Changed invalidates the client's cache before anyone acts on it), then
    /// its subscriptions, then its streams.
    func deliver(_ notification: GATTNotification, on handle: UInt16) {
        // Copies of the arrays (one retain each): a registration a recipient ends or makes
        // meanwhile changes the routes, not this walk.
        if notification.isIndication {
            let clients = clientRoutes
            for route in clients where route.link == handle { route.client.session?.indicationReceived(notification) }
        }
        let sinks = sinkRoutes
        sinks.withUnsafeBufferPointer { routes in
            for index in routes.indices where routes[index].link == handle && routes[index].valueHandle == notification.handle {
                routes[index].sink.deliver(notification)
            }
        }
        guard !streamRoutes.isEmpty else { return }
        let streams = streamRoutes
        for route in streams where route.link == handle && (route.valueHandle ?? notification.handle) == notification.handle {
            route.continuation.yield(notification)
        }
    }

    /// The link ended: every registration and stream on it ends (their consumers get what is buffered).
    func linkDown(_ handle: UInt16) {
        guard let link = links.removeValue(forKey: handle) else { return }
        for subscribers in link.subscribers.values { for subscriber in subscribers.values { subscriber.finish() } }
        for subscriber in link.allSubscribers.values { subscriber.finish() }
        for sinks in link.sinks.values { for sink in sinks.values { sink.queue.finish() } }
    }

    private func rebuildRoutes() {
        var clients: [ClientRoute] = []
        var sinks: [SinkRoute] = []
        var streams: [StreamRoute] = []
        for (handle, link) in links {
            if let client = link.gattClient { clients.append(ClientRoute(link: handle, client: WeakGATTClientSession(session: client))) }
            for (valueHandle, registrations) in link.sinks {
                for sink in registrations.values { sinks.append(SinkRoute(link: handle, valueHandle: valueHandle, sink: sink)) }
            }
            for (valueHandle, subscribers) in link.subscribers {
                for subscriber in subscribers.values {
                    streams.append(StreamRoute(link: handle, valueHandle: valueHandle, continuation: subscriber))
                }
            }
            for subscriber in link.allSubscribers.values {
                streams.append(StreamRoute(link: handle, valueHandle: nil, continuation: subscriber))
            }
        }
        clientRoutes = clients
        sinkRoutes = sinks
        streamRoutes = streams
    }
}
