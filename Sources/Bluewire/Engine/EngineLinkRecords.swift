import BluewireCore
import BluewireGATT
import BluewireHCI

/// What `EngineHost` keeps per link for the application layer: each link's GATT client session, the
/// subscription sinks its notifications go to, the tasks waiting for its end, and why recent links
/// ended (so that a call made just after the end names the reason, not "unknown connection").
struct EngineLinkRecords {
    struct SinkKey: Hashable {
        var connection: UInt16
        var valueHandle: UInt16
    }

    /// The GATT client session of each link up now, by handle, with the link's generation.
    var sessions: [UInt16: (generation: UInt64, session: EngineGATTSession)] = [:]
    /// The subscriptions' notification sinks, by link and value handle.
    var sinks: [SinkKey: [UInt64: NotificationSink]] = [:]
    var nextSinkID: UInt64 = 1
    /// Tasks in `EngineConnection.disconnection()`, by handle and generation.
    var endWaiters: [UInt16: [(generation: UInt64, waiter: UnsafeContinuation<HCIStatus, Never>)]] = [:]
    /// Why the last links ended, by generation (the newest few: a caller learns of an end at once or never).
    private(set) var endedReasons: [(generation: UInt64, reason: HCIStatus)] = []

    mutating func addSink(_ sink: NotificationSink, for key: SinkKey) -> UInt64 {
        let id = nextSinkID
        nextSinkID += 1
        sinks[key, default: [:]][id] = sink
        return id
    }

    mutating func removeSink(_ id: UInt64, for key: SinkKey) {
        sinks[key]?.removeValue(forKey: id)?.queue.finish()
        if sinks[key]?.isEmpty == true { sinks[key] = nil }
    }

    @inline(__always)
    func deliver(connection: UInt16, _ notification: GATTNotification) {
        guard let targets = sinks[SinkKey(connection: connection, valueHandle: notification.handle)] else { return }
        for target in targets.values { target.deliver(notification) }
    }

    /// The link under `handle` ended: its session records why (failing what its queue holds), its
    /// subscriptions end, and its waiters are answered.
    mutating func linkEnded(_ handle: UInt16, generation: UInt64?, reason: HCIStatus) {
        if let generation {
            endedReasons.append((generation, reason))
            if endedReasons.count > 32 { endedReasons.removeFirst(endedReasons.count - 32) }
        }
        if let (_, session) = sessions.removeValue(forKey: handle) { session.linkEnded(reason) }
        for key in sinks.keys where key.connection == handle {
            for sink in sinks.removeValue(forKey: key)?.values ?? [:].values { sink.queue.finish() }
        }
        for (_, waiter) in endWaiters.removeValue(forKey: handle) ?? [] { waiter.resume(returning: reason) }
    }

    func endedReason(generation: UInt64?) -> HCIStatus? {
        guard let generation else { return nil }
        return endedReasons.last { $0.generation == generation }?.reason
    }

    /// The host closed: every link ends with the local host's termination.
    mutating func hostClosed() {
        for handle in Array(sessions.keys) + Array(endWaiters.keys) + sinks.keys.map(\.connection) {
            linkEnded(handle, generation: nil, reason: .connectionTerminatedByLocalHost)
        }
    }
}
