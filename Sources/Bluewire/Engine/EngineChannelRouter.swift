import BluewireHostEngine
import BluewireL2CAP

/// Where `EngineHost` hands the engine's channel events: the `L2CAPChannel` objects it made and
/// the listeners. It routes only; what a channel does is the engine's.
struct EngineChannelRouter {
    struct Key: Hashable {
        var connection: UInt16
        var cid: UInt16
    }

    struct PendingOpen: Hashable {
        var connection: UInt16
        var psm: SPSM
    }

    var channels: [Key: L2CAPChannel] = [:]
    /// Channels opened for `openChannel` whose completion has not yet picked them up.
    var unclaimed: [Key: L2CAPChannel] = [:]
    /// `openChannel` calls waiting, per link and SPSM.
    var pendingOpens: [PendingOpen: Int] = [:]
    var listeners: [SPSM: L2CAPChannelListener] = [:]
    /// Channels closed because their link went down: they end with its reason at Disconnection
    /// Complete, which the engine reports right after.
    var linkClosed: Set<Key> = []

    mutating func route(_ event: HostEngineEvent, host: EngineHost) {
        switch event {
        case .channelOpened(let info):
            guard !(info.isEnhanced && info.psm == .eatt) else { return }
            let key = Key(connection: info.connection, cid: info.cid)
            if info.initiatedLocally {
                let pending = PendingOpen(connection: info.connection, psm: info.psm)
                guard !info.isEnhanced, let count = pendingOpens[pending], count > 0 else { return }
                pendingOpens[pending] = count > 1 ? count - 1 : nil
                let channel = L2CAPChannel(host: host, info)
                channels[key] = channel
                unclaimed[key] = channel
            } else if let listener = listeners[info.psm] {
                let channel = L2CAPChannel(host: host, info)
                channels[key] = channel
                listener.accepted(channel)
            }
        case .channelSDU(let connection, let cid, let sdu):
            channels[Key(connection: connection, cid: cid)]?.deliver(sdu)
        case .channelClosed(let connection, let cid, let reason):
            let key = Key(connection: connection, cid: cid)
            if reason == .linkClosed, channels[key] != nil {
                linkClosed.insert(key)
                return
            }
            let clean = reason == .local || reason == .remote
            channels.removeValue(forKey: key)?.end(reason: reason, error: clean ? nil : .closed(reason))
        case .disconnected(let handle, let reason):
            for key in channels.keys where key.connection == handle {
                channels.removeValue(forKey: key)?.end(reason: .linkClosed, error: .disconnected(reason))
                linkClosed.remove(key)
            }
        default:
            break
        }
    }

    /// The host closed or its transport ended: every channel and listener ends.
    mutating func hostClosed() {
        for channel in channels.values { channel.end(reason: nil, error: .engine(.notRunning)) }
        channels.removeAll()
        linkClosed.removeAll()
        for listener in listeners.values { listener.finish() }
        listeners.removeAll()
    }
}
