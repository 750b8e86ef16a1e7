import BluewireCore

/// What a Host holds right now, counted, so that fault-injection tests can prove nothing leaks: after
/// every link has gone, each count must be back to zero (or to what the application still holds).
///
/// `liveGATTSessions` counts sessions still allocated, whether or not the Host still lists their
/// link: one kept alive by a forgotten continuation or task shows up there. Links are values in the
/// shell, so `liveLinks` is the links it lists.
@_spi(Testing)
public struct HostDiagnostics: Sendable, Hashable, CustomStringConvertible {
    /// Links in the Host's table (open connections).
    public var links = 0
    /// Links the Host still keeps state for (the same as `links`: links are values, not objects).
    public var liveLinks = 0
    /// GATT client sessions still allocated. The application keeps one alive while it holds a
    /// `GATTClient` or a subscription of that connection.
    public var liveGATTSessions = 0
    /// ATT requests of the local client waiting for their response, on live links.
    public var requestWaiters = 0
    /// `indicate` calls of the local server waiting on a link's bearer, on live links. Always 0: the
    /// engine's server holds them, counted in `indicationTickets`.
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
    /// Whether the controller is advertising, as far as the Host knows (`isAdvertising`).
    public var advertising = false
    /// `events()` and `peripheralEvents()` sequences still registered.
    public var eventObservers = 0

    public init() {}

    /// Whether nothing is held for any connection: no link, waiter, queued packet or connection state
    /// (event observers and the application's own sessions aside).
    public var holdsNoConnectionState: Bool {
        var bare = self
        bare.eventObservers = 0
        bare.liveGATTSessions = 0
        bare.advertising = false
        return bare == HostDiagnostics()
    }

    public var description: String {
        "links \(links) (live \(liveLinks)), sessions \(liveGATTSessions), request waiters \(requestWaiters), "
            + "indication waiters \(indicationWaiters), disconnect waiters \(disconnectWaiters), "
            + "subscribers \(notificationSubscribers), command waiters \(commandWaiters), "
            + "ACL in flight \(aclPacketsInFlight) queued \(aclPacketsQueued) waiters \(aclQueueWaiters), partial L2CAP \(partialL2CAPPDUs), "
            + "server connections \(serverConnections), indication tickets \(indicationTickets), "
            + "peripheral centrals \(peripheralCentrals), pending connection \(pendingConnection), "
            + "scanning \(scanning), advertising \(advertising), observers \(eventObservers)"
    }
}

extension BluetoothHost {
    /// Counts of everything the Host holds now (see `HostDiagnostics`).
    @_spi(Testing)
    public var diagnostics: HostDiagnostics {
        engineDiagnostics(engineHost)
    }
}
