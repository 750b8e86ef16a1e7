import BluewireHostEngine

/// A GATT client session, held weakly (`HostDiagnostics.liveGATTSessions`, ShellNotificationRoutes).
struct WeakGATTClientSession {
    weak var session: GATTClientSession?
}

extension BluetoothHost {
    /// `diagnostics`: the shell's own waiters and registrations, and the
    /// engine's counts (HostEngine+Diagnostics). Links are values here, not objects, so `liveLinks` is
    /// the links the shell lists; a request waits in the engine's client queue, so `requestWaiters`
    /// counts the engine's unfinished client operations, and `indicationTickets` its pending
    /// indications (the one waiting for its confirmation and those queued behind it).
    func engineDiagnostics(_ engineHost: EngineHost) -> HostDiagnostics {
        var d = HostDiagnostics()
        d.links = shell.links.count
        d.liveLinks = shell.links.count
        d.liveGATTSessions = shell.gattSessions.count { $0.session != nil }
        for link in shell.links.values {
            d.disconnectWaiters += link.disconnectWaiters.count
            if link.role == .peripheral { d.peripheralCentrals += 1 }
        }
        for link in notificationRoutes.links.values { d.notificationSubscribers += link.count }
        engineHost.assumeIsolated { host in
            let engine = host.engine
            d.requestWaiters = engine.pendingClientRequests
            d.indicationTickets = engine.pendingIndications
            d.commandWaiters = engine.pendingRawCommands
            d.aclPacketsInFlight = engine.aclPacketsInFlight
            d.aclPacketsQueued = engine.connectionHandles.reduce(0) { $0 + engine.queuedACLPackets(connection: $1) }
            d.partialL2CAPPDUs = engine.partialL2CAPPDUs
            d.serverConnections = engine.serverConnectionCount
        }
        d.aclQueueWaiters = aclQueueWaiters.count
        d.pendingConnection = shell.connectingPeer != nil
        d.scanning = shell.scan != nil
        d.advertising = engineIsAdvertising(engineHost)
        d.eventObservers = eventObservers.count + peripheral.observers.count
        return d
    }
}
