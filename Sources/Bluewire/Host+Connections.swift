import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI

/// A connection attempt waiting for LE Connection Complete.
struct PendingConnection {
    var peer: BluetoothAddress
    var deadline: MonotonicInstant
    /// The caller waiting in `connect`; nil until it starts waiting.
    var continuation: CheckedContinuation<Result<Connection, HostError>, Never>?
    /// The outcome, when it came before the caller started waiting (a controller may report the
    /// connection right behind the Command Status, before `connect` has resumed).
    var outcome: Result<Connection, HostError>?
    /// Whether LE Create Connection went out (only then is there something to cancel, §7.8.13).
    var commandSent = false
}

extension BluetoothHost {
    /// Connects to a peripheral as central (LE Create Connection, or LE Extended Create Connection
    /// when the controller supports it), waiting at most `timeout` (the configuration's by default)
    /// for the connection to complete; on timeout the attempt is cancelled. Cancelling the calling
    /// task cancels the attempt too (LE Create Connection Cancel) and throws
    /// `.connectionFailed(peer, .operationCancelledByHost)`.
    ///
    /// The attempt goes through the peer's connection state machine (`state(of:)`, Docs/Design.md):
    /// `Connect` now (Disconnected.Initial, or Scanning while a scan runs, → Connecting), `Connected`
    /// on LE Connection Complete (→ Connected.Idle). A cancelled attempt fires `Disconnect` (back to
    /// Initial: the application asked for it, nothing failed); an attempt that failed (an error status,
    /// the timeout, LE Create Connection refused, a Hardware Error) fires `Failure` and leaves the
    /// peer in Error with the cause (`failure(of:)`) until `reset(_:)`. `connect` is refused with
    /// `.refused` while the peer is connected (or its link is still ending) and while it is in Error.
    ///
    /// Where the controller supports them, the link is set up for throughput (`prepareCentralLink`):
    /// 2M PHY preferred, data length raised to 251 octets. Controllers that refuse either keep the
    /// defaults; that never fails the connection.
    public func connect(
        to peer: BluetoothAddress,
        parameters: LEConnectionParameters = LEConnectionParameters(),
        timeout: TimeSpan? = nil
    ) async throws(HostError) -> Connection {
        if let engineHost {
            shell.connectingPeer = peer
            defer { shell.connectingPeer = nil }
            return try await engineConnect(engineHost, to: peer, parameters: parameters, timeout: timeout)
        }
        guard phase == .running, let controller else { throw .notRunning }
        guard pendingConnection == nil else { throw .connectionAttemptInProgress }
        do throws(ConnectionTriggerRefused) {
            try peerRecord(peer).fire(.connect)
        } catch {
            throw .refused(error)
        }
        // The attempt exists from now on, so a cancel asked while the scan stops finds it.
        pendingConnection = PendingConnection(peer: peer, deadline: now + (timeout ?? configuration.connectionTimeout))
        if scanSession != nil { await stopScan() }
        let command: HCICommand = controller.supportsExtendedCreateConnection
            ? .leExtendedCreateConnection(LEExtendedCreateConnection(
                peerAddress: peer, le1M: .init(connection: parameters)))
            : .leCreateConnection(LECreateConnection(peerAddress: peer, connection: parameters))
        // Queued behind the scan's stop and ahead of any cancel asked later (Host+Procedures.swift).
        // Waiting starts before the command goes out, so a Connection Complete right behind the
        // Command Status finds the attempt.
        let created = await runProcedure { host -> Result<Void, HostError>? in
            guard host.isAwaitingConnection, host.pendingConnection?.peer == peer else { return nil }
            await host.preferPHYsForNewConnections(controller)
            guard host.isAwaitingConnection, host.pendingConnection?.peer == peer else { return nil }
            host.pendingConnection?.commandSent = true
            switch await host.sendCommandResult(command) {
            case .success: return .success(())
            case .failure(let error):
                if case .cancelled = error, let cause = host.commandCancellationCause { return .failure(cause) }
                return .failure(.command(error))
            }
        }
        if case .failure(let error)? = created {
            if let pending = pendingConnection, pending.peer == peer, pending.continuation == nil {
                pendingConnection = nil
                // Not resolved yet: LE Create Connection itself failed. (A Hardware Error or a lost
                // transport resolved the attempt already, which fired its Failure.)
                if pending.outcome == nil { connectAttemptEnded(peer, error) }
            }
            throw error
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard var pending = pendingConnection, pending.peer == peer, pending.continuation == nil else {
                    continuation.resume(returning: Result<Connection, HostError>.failure(.connectionFailed(peer, .operationCancelledByHost)))
                    return
                }
                if let outcome = pending.outcome {
                    pendingConnection = nil
                    continuation.resume(returning: outcome)
                    return
                }
                pending.continuation = continuation
                pendingConnection = pending
                if Task.isCancelled {
                    cancelConnectionAttempt(to: peer)
                } else {
                    rescheduleTimer()
                }
            }
        } onCancel: {
            Task { await self.cancelConnectionAttempt(to: peer) }
        }
        let connection = try result.get()
        await prepareCentralLink(connection.handle, controller)
        return connection
    }

    /// Cancels a connection attempt in progress (LE Create Connection Cancel); its `connect` throws
    /// `.connectionFailed(peer, .operationCancelledByHost)`. Nothing happens if none is in progress.
    public func cancelConnectionAttempt() {
        if engineHost != nil { return engineCancelConnect() }
        guard let pending = pendingConnection else { return }
        cancelConnectionAttempt(to: pending.peer)
    }

    func cancelConnectionAttempt(to peer: BluetoothAddress) {
        guard let pending = pendingConnection, pending.peer == peer, pending.outcome == nil else { return }
        resolvePendingConnection(.failure(.connectionFailed(pending.peer, .operationCancelledByHost)))
        // A Connection Complete that still arrives (bumble cancels nothing) is disconnected then.
        // Queued behind LE Create Connection if that is still queued; nothing to cancel if it was
        // never sent (its procedure sees the attempt resolved and skips it).
        enqueueProcedure { host in
            guard host.pendingConnection?.commandSent ?? pending.commandSent else { return }
            _ = await host.sendCommandResult(.leCreateConnectionCancel)
        }
        rescheduleTimer()
    }

    /// Hands the attempt's outcome to `connect`, now or when it starts waiting.
    func resolvePendingConnection(_ outcome: Result<Connection, HostError>) {
        guard var pending = pendingConnection, pending.outcome == nil else { return }
        if case .failure(let error) = outcome { connectAttemptEnded(pending.peer, error) }
        if let continuation = pending.continuation {
            pendingConnection = nil
            continuation.resume(returning: outcome)
        } else {
            pending.outcome = outcome
            pendingConnection = pending
        }
    }

    /// An attempt ended without a connection: a cancel (or the application closing the host) is
    /// `Disconnect` (Connecting → Initial), anything else `Failure` (→ Error) with the cause. Cannot
    /// be refused: the peer's machine is in Connecting from `connect`'s Connect until its attempt is
    /// resolved, which happens once.
    func connectAttemptEnded(_ peer: BluetoothAddress, _ error: HostError) {
        let record = peerRecord(peer)
        switch error {
        case .connectionFailed(_, .operationCancelledByHost), .notRunning:
            fireExpected(.disconnect, on: record)
        default:
            fireExpected(.failure, on: record, cause: .host(error))
        }
    }

    /// True from the moment `connect` is called until its attempt succeeded, failed or was cancelled.
    public var isConnecting: Bool { engineHost == nil ? isAwaitingConnection : shell.connectingPeer != nil }

    /// Whether an attempt is still waiting for its Connection Complete.
    var isAwaitingConnection: Bool { pendingConnection != nil && pendingConnection?.outcome == nil }

    func connectionComplete(_ event: LEConnectionComplete) {
        let role: LinkRole = event.isCentral ? .central : .peripheral
        guard event.status.isSuccess else {
            // Only once our LE Create Connection went out: before that a failure is an older
            // attempt's (a killed program's, cancelled by `clearControllerLeftovers`, §7.8.13).
            if let pending = pendingConnection, isAwaitingConnection, pending.commandSent {
                resolvePendingConnection(.failure(.connectionFailed(pending.peer, event.status)))
            }
            return
        }
        // The attempt `connect` waits for: its link runs on the peer's machine (in Connecting since
        // `connect` fired Connect). A central that connected to this host, or a late connection the
        // host drops, gets a machine of its own, created in Connecting as the controller saw it.
        let attempt = role == .central && isAwaitingConnection && pendingConnection?.commandSent == true
        let record = (attempt ? pendingConnection.map { peerRecord($0.peer) } : nil)
            ?? PeerRecord(address: event.peerAddress, state: .disconnected(.connecting))
        let link = Link(
            handle: event.connectionHandle, role: role, peer: event.peerAddress,
            connectionInterval: event.connectionInterval, preferredMTU: configuration.preferredMTU, peerState: record)
        links[event.connectionHandle] = link
        endedLinks[event.connectionHandle] = nil
        endedLinkStates[event.connectionHandle] = nil
        gattServer.connect(event.connectionHandle)
        publishServerEvents()
        let connection = Connection(host: self, handle: event.connectionHandle, peer: event.peerAddress, role: role)
        attachGATTClient(to: link, connection: connection)
        // Cannot be refused: the record is in Connecting (see above). If it were, the link would be out
        // of step with its model: the caller of `connect` gets the refusal and the link is dropped.
        let refusal = fireExpected(.connected, on: record)
        log.hci.debug("connected", metadata: ["handle": "0x\(hex(event.connectionHandle, width: 4))", "peer": "\(event.peerAddress)", "role": "\(role)"])
        if role == .central {
            if attempt, let refusal {
                resolvePendingConnection(.failure(.refused(refusal)))
                disconnectLater(handle: event.connectionHandle)
            } else if attempt {
                resolvePendingConnection(.success(connection))
            } else {
                // A connection we stopped waiting for (timed out, and the controller ignored the cancel).
                log.hci.debug("late connection 0x\(hex(event.connectionHandle, width: 4)) closed")
                disconnectLater(handle: event.connectionHandle)
            }
        }
        publish(.connected(connection))
        rescheduleTimer()
    }

    func connectionAttemptTimedOut() {
        guard let pending = pendingConnection, isAwaitingConnection else { return }
        resolvePendingConnection(.failure(.connectionTimeout(pending.peer)))
        // Some controllers (bumble's) accept the cancel and cancel nothing: a late Connection
        // Complete is then disconnected in `connectionComplete`.
        enqueueProcedure { host in
            guard host.pendingConnection?.commandSent ?? pending.commandSent else { return }
            _ = await host.sendCommandResult(.leCreateConnectionCancel)
        }
    }

    func failPendingConnection(_ error: HostError) {
        guard isAwaitingConnection else { return }
        resolvePendingConnection(.failure(error))
    }

    /// Disconnects (HCI Disconnect) and waits for Disconnection Complete. Reason defaults to Remote
    /// User Terminated Connection (0x13), as Core Vol 4 Part E §7.1.6 suggests for a user's request.
    public func disconnect(handle: UInt16, reason: HCIStatus = .remoteUserTerminatedConnection) async throws(HostError) {
        if let engineHost { return try await engineDisconnect(engineHost, handle: handle, reason: reason) }
        guard let link = links[handle] else { return }
        _ = try await send(.disconnect(Disconnect(connectionHandle: handle, reason: reason)))
        guard links[handle] === link else { return }
        _ = await withCheckedContinuation { continuation in link.disconnectWaiters.append(continuation) }
    }

    /// Sends HCI Disconnect as a procedure (behind the ones already queued) without waiting for
    /// Disconnection Complete: for links the host drops on its own (a late connection, an ATT
    /// transaction timeout).
    func disconnectLater(handle: UInt16, reason: HCIStatus = .remoteUserTerminatedConnection) {
        enqueueProcedure { host in
            guard host.links[handle] != nil else { return }
            _ = await host.sendCommandResult(.disconnect(Disconnect(connectionHandle: handle, reason: reason)))
        }
    }

    /// The controller reported the connection gone: fail everything pending on it.
    func linkDisconnected(handle: UInt16, reason: HCIStatus) {
        guard let link = links.removeValue(forKey: handle) else { return }
        endedLinks[handle] = reason
        log.hci.debug("disconnected", metadata: ["handle": "0x\(hex(handle, width: 4))", "reason": "\(reason)"])
        // Before anything waiting on the link resumes, so each of them can say why it ended.
        link.gattClient?.recordDisconnection(reason: reason)
        link.bearer.disconnected()
        for (_, waiter) in link.requestWaiters { waiter.resume(returning: .failure(.disconnected(reason))) }
        link.requestWaiters.removeAll()
        for (_, waiter) in link.indicationWaiters { waiter.resume(returning: .failure(.disconnected(reason))) }
        link.indicationWaiters.removeAll()
        for subscribers in link.notificationSubscribers.values { for c in subscribers.values { c.finish() } }
        for c in link.allNotificationSubscribers.values { c.finish() }
        link.notificationSubscribers.removeAll()
        for sinks in link.notificationSinks.values { for sink in sinks.values { sink.queue.finish() } }
        link.notificationSinks.removeAll()
        link.allNotificationSubscribers.removeAll()
        if link.peerState.state.isConnected {
            // Cannot be refused: every Connected substate accepts Disconnect (through the superstate).
            // A machine already in Error (a failure ended the link) stays there: only Reset leaves it.
            fireExpected(.disconnect, on: link.peerState)
        }
        link.peerState.linkObserver = nil
        endedLinkStates[handle] = link.peerState.state
        link.gattClient?.linkDisconnected()
        for waiter in link.disconnectWaiters { waiter.resume(returning: reason) }
        link.disconnectWaiters.removeAll()
        _ = aclCredits.disconnected(handle: handle)
        reassembler.disconnected(handle: handle)
        gattServer.disconnect(handle)
        publishServerEvents()
        _ = link.bearer.takeOutputs()
        publish(.disconnected(handle: handle, peer: link.peer, reason: reason))
        pumpACL()
        rescheduleTimer()
    }

    /// A failure ends every link (a Hardware Error, the transport lost): each link's machine goes to
    /// Error with `cause` (Failure), then the link ends with `reason`.
    func failLinks(cause: ConnectionFailureCause, reason: HCIStatus) {
        for handle in Array(links.keys) {
            guard let link = links[handle] else { continue }
            // Cannot be refused: Failure is accepted in every state but Error, which is skipped.
            if link.peerState.state != .error { fireExpected(.failure, on: link.peerState, cause: cause) }
            linkDisconnected(handle: handle, reason: reason)
        }
    }

    /// Open connections.
    public var connections: [Connection] {
        if let engineHost { return engineConnections(engineHost) }
        return links.values.sorted { $0.handle < $1.handle }.map {
            Connection(host: self, handle: $0.handle, peer: $0.peer, role: $0.role)
        }
    }
}
