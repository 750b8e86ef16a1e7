import BluewireCore
import BluewireL2CAP

/// What a Host holds right now, counted, so that fault-injection tests can prove nothing leaks: after
/// every link has gone, each count must be back to zero (or to what the application still holds).
///
/// `liveLinks` and `liveGATTSessions` count objects still allocated, whether or not the Host still
/// lists them: a link removed from the table but kept alive by a forgotten continuation or task shows
/// up there, and its waiters are counted too.
@_spi(Testing)
public struct HostDiagnostics: Sendable, Hashable, CustomStringConvertible {
    /// Links in the Host's table (open connections).
    public var links = 0
    /// `Link` objects still allocated (in the table or not).
    public var liveLinks = 0
    /// GATT client sessions still allocated. The application keeps one alive while it holds a
    /// `GATTClient` or a subscription of that connection.
    public var liveGATTSessions = 0
    /// ATT requests of the local client waiting for their response, on live links.
    public var requestWaiters = 0
    /// `indicate` calls of the local server waiting on a link's bearer, on live links.
    public var indicationWaiters = 0
    /// Callers waiting for a link to end, on live links.
    public var disconnectWaiters = 0
    /// Notification streams registered on live links.
    public var notificationSubscribers = 0
    /// Callers waiting for an HCI command's answer.
    public var commandWaiters = 0
    /// ACL packets handed to the controller and not yet reported completed.
    public var aclPacketsInFlight = 0
    /// ACL packets waiting for controller buffers, on every handle the Host has used.
    public var aclPacketsQueued = 0
    /// Senders waiting for a link's ACL queue to drain (`waitForACLQueue`).
    public var aclQueueWaiters = 0
    /// Handles with a partly reassembled L2CAP PDU, among every handle the Host has used.
    public var partialL2CAPPDUs = 0
    /// Connections the local GATT server keeps state for.
    public var serverConnections = 0
    /// `indicate` calls waiting for a central's confirmation.
    public var indicationTickets = 0
    /// Links on which the local device is peripheral, as the peripheral role counts them.
    public var peripheralCentrals = 0
    /// Whether a `connect` is waiting for its connection.
    public var pendingConnection = false
    /// Whether a scan is running.
    public var scanning = false
    /// `events()` and `peripheralEvents()` sequences still registered.
    public var eventObservers = 0

    public init() {}

    /// Whether nothing is held for any connection: no link, waiter, queued packet or connection state
    /// (event observers and the application's own sessions aside).
    public var holdsNoConnectionState: Bool {
        var bare = self
        bare.eventObservers = 0
        bare.liveGATTSessions = 0
        return bare == HostDiagnostics()
    }

    public var description: String {
        "links \(links) (live \(liveLinks)), sessions \(liveGATTSessions), request waiters \(requestWaiters), "
            + "indication waiters \(indicationWaiters), disconnect waiters \(disconnectWaiters), "
            + "subscribers \(notificationSubscribers), command waiters \(commandWaiters), "
            + "ACL in flight \(aclPacketsInFlight) queued \(aclPacketsQueued) waiters \(aclQueueWaiters), partial L2CAP \(partialL2CAPPDUs), "
            + "server connections \(serverConnections), indication tickets \(indicationTickets), "
            + "peripheral centrals \(peripheralCentrals), pending connection \(pendingConnection), "
            + "scanning \(scanning), observers \(eventObservers)"
    }
}

/// Weak references to the per-connection objects a Host made, so that `diagnostics` can count the
/// ones still alive. Only touched on the Host's executor.
final class HostObjectLifetimes {
    private struct Entry {
        let handle: UInt16
        weak var link: Link?
        weak var session: GATTClientSession?
    }

    private var entries: [Entry] = []
    /// Every connection handle the Host has used (bounded by the 0x0EFF handles HCI allows).
    private(set) var handles: Set<UInt16> = []

    func track(_ link: Link, session: GATTClientSession) {
        entries.removeAll { $0.link == nil && $0.session == nil }
        entries.append(Entry(handle: link.handle, link: link, session: session))
        handles.insert(link.handle)
    }

    var liveLinks: [Link] { entries.compactMap(\.link) }
    var liveSessionCount: Int { entries.count { $0.session != nil } }
}

extension BluetoothHost {
    /// Counts of everything the Host holds now (see `HostDiagnostics`).
    @_spi(Testing)
    public var diagnostics: HostDiagnostics {
        if let engineHost { return engineDiagnostics(engineHost) }
        var d = HostDiagnostics()
        d.links = links.count
        let live = lifetimes.liveLinks
        d.liveLinks = live.count
        d.liveGATTSessions = lifetimes.liveSessionCount
        for link in live {
            d.requestWaiters += link.requestWaiters.count
            d.indicationWaiters += link.indicationWaiters.count
            d.disconnectWaiters += link.disconnectWaiters.count
            d.notificationSubscribers += link.allNotificationSubscribers.count
                + link.notificationSubscribers.values.reduce(0) { $0 + $1.count }
                + link.notificationSinks.values.reduce(0) { $0 + $1.count }
        }
        d.commandWaiters = commandWaiters.count
        d.aclPacketsInFlight = aclCredits.inFlight.values.reduce(0, +)
        let handles = lifetimes.handles.union(links.keys)
        d.aclPacketsQueued = handles.reduce(0) { $0 + aclCredits.queuedCount(handle: $1) }
        d.aclQueueWaiters = aclQueueWaiters.count
        d.partialL2CAPPDUs = handles.count { reassembler.isReassembling(handle: $0) }
        d.serverConnections = gattServer.connectionCount
        d.indicationTickets = peripheral.indicationTickets.values.reduce(0) { $0 + $1.count }
        d.peripheralCentrals = peripheral.centrals.count
        d.pendingConnection = pendingConnection != nil
        d.scanning = scanSession != nil
        d.eventObservers = eventObservers.count + peripheral.observers.count
        return d
    }
}
