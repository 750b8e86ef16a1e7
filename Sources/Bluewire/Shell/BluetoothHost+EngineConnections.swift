import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine

/// What the shell keeps of one engine link: what `Connection` reports that the engine does not.
struct ShellLink {
    var peer: BluetoothAddress
    var role: LinkRole
    /// The number this host gave the link as it came up (from 1): what tells it from an earlier
    /// link that had the same handle, even to the same peer.
    var generation: UInt64
    var disconnectWaiters: [CheckedContinuation<HCIStatus, Never>] = []
    /// The link's GATT client (its operation queue, discovered database and transitions), fed from
    /// the engine's `.stateChanged` for the peer and its notifications.
    var gattClient: GATTClientSession?
}

extension BluetoothHost {
    /// `connect(to:parameters:timeout:)`: the engine's `.connect`, which runs
    /// the peer's state machine, stops a running scan first and prepares the link (2M preferred,
    /// data length 251). Cancelling the calling task withdraws the attempt (`.cancelConnect`).
    func engineConnect(
        _ engineHost: EngineHost, to peer: BluetoothAddress, parameters: LEConnectionParameters, timeout: TimeSpan?
    ) async throws(HostError) -> Connection {
        guard phase == .running else { throw .notRunning }
        let result = await withTaskCancellationHandler {
            await engineHost.perform(.connect(peer, parameters, timeout: timeout))
        } onCancel: {
            Task { await self.engineCancelConnect() }
        }
        switch result {
        case .success(.connected(let link)):
            return connectionValue(handle: link.handle, peer: link.peer, role: LinkRole(link.role))
        case .success:
            throw .notRunning
        case .failure(.cancelled):
            throw .connectionFailed(peer, .operationCancelledByHost)
        case .failure(let error):
            throw HostError(engine: error, peer: peer)
        }
    }

    func engineCancelConnect() {
        _ = enginePerformNow(engineHost, .cancelConnect)
    }

    /// `disconnect(handle:reason:)`: done at the link's Disconnection Complete.
    func engineDisconnect(_ engineHost: EngineHost, handle: UInt16, reason: HCIStatus) async throws(HostError) {
        switch await engineHost.perform(.disconnect(handle: handle, reason: reason)) {
        case .success, .failure(.unknownConnection): return
        case .failure(let error): throw HostError(engine: error)
        }
    }

    func engineConnections(_ engineHost: EngineHost) -> [Connection] {
        engineHost.onSharedExecutor { host in
            host.engine.connectionHandles.compactMap { host.engine.connection($0) }
        }.map { connectionValue(handle: $0.handle, peer: $0.peer, role: LinkRole($0.role)) }
    }

    func engineConnectionState(_ engineHost: EngineHost, handle: UInt16) -> ConnectionState {
        guard let link = shell.links[handle] else { return endedLinkStates[handle] ?? .initial }
        return engineLinkState(peer: link.peer, role: link.role)
    }

    /// The state of a live link: for one this host made as central, its peer's machine in the engine;
    /// for one a central made to this host, Connected.Idle. The engine keeps no machine for those: it
    /// runs no GATT client procedure of its own there, so such a link only goes Connecting → Connected.Idle.
    func engineLinkState(peer: BluetoothAddress, role: LinkRole) -> ConnectionState {
        guard role == .central else { return .connected(.idle) }
        return engineHost.onSharedExecutor(passing: peer) { $0.engine.state(of: $1) }
    }

    func engineWaitForDisconnection(handle: UInt16) async -> HCIStatus {
        guard shell.links[handle] != nil else { return endedReason(handle) }
        return await withCheckedContinuation { continuation in shell.links[handle]?.disconnectWaiters.append(continuation) }
    }

    // MARK: the links, from the engine's events

    func engineLinkUp(_ link: HostConnection) {
        let generation = shell.nextLinkGeneration
        shell.nextLinkGeneration &+= 1
        var shellLink = ShellLink(peer: link.peer, role: LinkRole(link.role), generation: generation)
        let connection = Connection(host: self, handle: link.handle, peer: link.peer, role: shellLink.role, generation: generation)
        let state = engineLinkState(peer: link.peer, role: shellLink.role)
        let session = GATTClientSession(connection: connection, state: state)
        shellLink.gattClient = session
        shell.gattSessions.removeAll { $0.session == nil }
        shell.gattSessions.append(WeakGATTClientSession(session: session))
        shell.links[link.handle] = shellLink
        notificationRoutes.links[link.handle] = ShellNotificationRoutes.Link(gattClient: session)
        endedLinks[link.handle] = nil
        endedLinkStates[link.handle] = nil
        shell.endedLinkGenerations[link.handle] = nil
    }

    func engineLinkDown(handle: UInt16, reason: HCIStatus) -> ShellLink? {
        guard let link = shell.links.removeValue(forKey: handle) else { return nil }
        endedLinks[handle] = reason
        shell.endedLinkGenerations[handle] = LinkIdentity(peer: link.peer, generation: link.generation)
        // Before anything waiting on the link resumes, so each of them can say why it ended.
        link.gattClient?.recordDisconnection(reason: reason)
        endedLinkStates[handle] = link.role == .central ? engineLinkState(peer: link.peer, role: .central) : .initial
        notificationRoutes.linkDown(handle)
        link.gattClient?.linkDisconnected()
        for waiter in link.disconnectWaiters { waiter.resume(returning: reason) }
        return link
    }
}

extension LinkRole {
    init(_ role: HostLinkRole) {
        self = role == .central ? .central : .peripheral
    }
}
