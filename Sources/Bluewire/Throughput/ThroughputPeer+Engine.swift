import BluewireCore
import BluewireGATT
import BluewireHostEngine

extension ThroughputPeer {
    /// Something the peer did or saw on an `EngineHost`, for its operator.
    public enum EngineEvent: Sendable, Hashable {
        /// A host event (connections, MTU, subscriptions, reads of the sink report...).
        case host(HostEngineEvent)
        /// A central subscribed to the stream; notifications start.
        case streamStarted(connection: UInt16)
        /// The stream to a central ended (unsubscribed, disconnected, or replaced by a new subscription).
        case streamStopped(connection: UInt16, notifications: Int)
        /// A central reset its sink counters (wrote the sink report).
        case sinkReset(connection: UInt16)
        /// A central that wrote to the sink disconnected: what the sink counted for it since the last reset.
        case sinkTotals(connection: UInt16, ThroughputSinkReport)
    }

    /// Runs the peer on an `EngineHost` (serving `database`, set by the caller with `setDatabase`)
    /// from `events` (the host's `events()`): for each subscription to the stream characteristic the
    /// engine streams sequence-numbered notifications (`HostRequest.streamATT`) as fast as the
    /// controller's ACL buffers take them, until the central unsubscribes or leaves; reports through
    /// `onEvent`. Returns when `events` finishes (the host closed) or the task is cancelled; streams
    /// still running are stopped then.
    ///
    /// ```swift
    /// let peer = try ThroughputPeer(name: "Bluewire Throughput")
    /// await host.setDatabase(peer.database)
    /// let events = await host.events()                  // before advertising: no central is missed
    /// _ = await host.perform(.start)
    /// _ = await host.perform(.startAdvertising(.named("Bluewire Throughput", services: [ThroughputProfile.service])))
    /// await peer.serve(on: host, events: events) { event in print(event) }
    /// ```
    public func serve(
        on host: EngineHost, events: AsyncStream<HostEngineEvent>, onEvent: @escaping @Sendable (EngineEvent) -> Void = { _ in }
    ) async {
        var streams: [UInt16: Task<Void, Never>] = [:]
        // The engine has no event for a write a handler took: the sink says when its report is written.
        sink.observeResets { onEvent(.sinkReset(connection: $0)) }
        let stream = handles.stream
        for await event in events {
            switch event {
            case .server(.subscriptionChanged(let subscription)) where subscription.valueHandle == stream:
                onEvent(.host(event))
                guard subscription.notifications else { continue }
                let connection = subscription.connection
                onEvent(.streamStarted(connection: connection))
                // A running stream on the link ends `.replaced` when the new one starts, and reports then.
                streams[connection] = Task {
                    let result = await host.perform(.streamATT(connection: connection, ATTStream(pdu: .notification, valueHandle: stream)))
                    let sent = if case .success(.streamed(let sent, _)) = result { sent } else { 0 }
                    onEvent(.streamStopped(connection: connection, notifications: sent))
                }
            case .disconnected(let connection, _):
                onEvent(.host(event))
                streams.removeValue(forKey: connection)
                if let totals = sink.remove(connection), totals.packets > 0 {
                    onEvent(.sinkTotals(connection: connection, totals))
                }
            default:
                onEvent(.host(event))
            }
        }
        // The events ended or the task was cancelled: the engine's streams stop too (each stream's
        // task reports it as it completes).
        for connection in streams.keys.sorted() {
            _ = await host.perform(.stopATTStream(connection: connection, .notification))
        }
        sink.observeResets(nil)
    }
}
