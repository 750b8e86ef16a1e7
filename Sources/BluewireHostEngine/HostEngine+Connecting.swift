import BluewireCore
import BluewireGATT
import BluewireHCI

// Left out of builds with BLUEWIRE_NO_CENTRAL (the peripheral firmware image); HostEngine+NoCentral stands in.
#if !BLUEWIRE_NO_CENTRAL

extension HostEngine {
    // MARK: central: creating a connection

    mutating func connect(_ id: HostRequestID, _ identityOrAddress: BluetoothAddress, _ parameters: LEConnectionParameters, timeout: TimeSpan?) {
        guard phase == .running, let controller else { return complete(id, .failure(.notRunning)) }
        // A bonded peer asked for by its identity address is reached at the private address it was last
        // seen advertising with (Core Vol 3 Part C §10.8.2.3).
        // With the peer in the controller's resolving list, its identity (type 0x02/0x03): the controller
        // finds whichever private address it advertises from now.
        let peer = resolvingListTarget(identityOrAddress) ?? currentAddress(of: identityOrAddress)
        if let pending = pendingConnection {
            // An attempt the application cancelled (or that timed out) ends only when the controller
            // reports its LE Connection Complete (§7.8.13): this one waits for that, so that report is
            // never taken for its own. One that is still the application's is refused.
            guard pending.requestID == nil, deferredConnect == nil else { return complete(id, .failure(.connectionAttemptInProgress)) }
            // What the peer's machine refuses (a peer in Error, or connected) is refused now, not
            // after the wait: waiting could not change the answer.
            let current = state(of: identityOrAddress)
            guard ConnectionStateMachine.transition(from: current, on: .connect) != nil else {
                return complete(id, .failure(.refused(state: current, trigger: .connect)))
            }
            deferredConnect = DeferredConnect(
                id: id, peer: identityOrAddress, parameters: parameters, deadline: now + (timeout ?? configuration.connectionTimeout))
            return
        }
        // Connect from Disconnected.Initial → Connecting; refused while the peer is connected or in Error.
        do throws(HostEngineError) {
            try fire(.connect, peer: identityOrAddress)
        } catch {
            return complete(id, .failure(error))
        }
        // Scanning and initiating together is more than many controllers do: stop the scan first.
        if scan != nil { stopScan(nil) }
        var commands: [ProcedureCommand] = []
        if controller.supports2MPHY {
            // Prefer 2M on new links; a refusal keeps 1M (§7.8.48).
            commands.append(ProcedureCommand(
                command: .leSetDefaultPHY(LESetDefaultPHY(allPHYs: 0, txPHYs: [.le1M, .le2M], rxPHYs: [.le1M, .le2M])),
                optional: true))
        }
        let create: HCICommand = controller.supportsExtendedCreateConnection
            ? .leExtendedCreateConnection(LEExtendedCreateConnection(peerAddress: peer, le1M: .init(connection: parameters)))
            : .leCreateConnection(LECreateConnection(peerAddress: peer, connection: parameters))
        commands.append(ProcedureCommand(command: create, optional: false))
        pendingConnection = PendingConnection(requestID: id, peer: peer, requested: identityOrAddress, deadline: now + (timeout ?? configuration.connectionTimeout))
        enqueue(ControllerProcedure(id: id, kind: .connect, commands: commands))
    }

    /// LE Create Connection Cancel (§7.8.13), queued behind the Create Connection. The attempt
    /// completes with `.cancelled` right away; a connection the controller still reports (bumble's
    /// controller cancels nothing) is disconnected when it comes.
    mutating func cancelConnect(_ id: HostRequestID) {
        if let deferred = deferredConnect {
            // Not begun: nothing was sent and its peer's machine never moved.
            deferredConnect = nil
            complete(deferred.id, .failure(.cancelled))
            return complete(id, .success(.done))
        }
        guard let pending = pendingConnection, pending.requestID != nil else {
            return complete(id, .success(.done))
        }
        pendingConnection?.requestID = nil
        pendingConnection?.deadline = now + Self.cancelledAttemptEndWait
        // Accepted: an attempt with a request ID is in Connecting (Connect fired when it began; only
        // its end, which clears the ID, moves it on). A cancelled attempt is not a failure: → Initial.
        fireExpected(.disconnect, peer: pending.requested)
        complete(pending.requestID, .failure(.cancelled))
        enqueue(id, .cancelConnect, [.leCreateConnectionCancel], optional: true)
    }

    /// Starts the connect that waited for the previous attempt's end, once it has ended (from
    /// `pumpProcedures`, after every input).
    mutating func startDeferredConnect() {
        guard pendingConnection == nil, let deferred = deferredConnect else { return }
        deferredConnect = nil
        connect(deferred.id, deferred.peer, deferred.parameters, timeout: deferred.deadline - now)
    }

    /// The waiting connect's deadline passed before the previous attempt ended: it fails with
    /// `.connectionTimeout`, its peer's machine untouched (it never began).
    mutating func deferredConnectTimedOut() {
        guard let deferred = deferredConnect, deferred.deadline <= now else { return }
        deferredConnect = nil
        complete(deferred.id, .failure(.connectionTimeout))
    }

    mutating func connectionAttemptTimedOut() {
        guard let pending = pendingConnection, let id = pending.requestID else { return }
        pendingConnection?.requestID = nil
        pendingConnection?.deadline = now + Self.cancelledAttemptEndWait
        // Accepted: in Connecting, as in cancelConnect.
        fireExpected(.failure, peer: pending.requested, cause: .connectionTimeout)
        complete(id, .failure(.connectionTimeout))
        enqueue(nil, .bestEffort, [.leCreateConnectionCancel], optional: true)
    }

    /// How long the engine waits for the LE Connection Complete that ends a cancelled (or timed
    /// out) attempt (Core Vol 4 Part E §7.8.13 says the controller sends it; a controller answers
    /// within milliseconds). A controller that never does would otherwise hold every later connect.
    static var cancelledAttemptEndWait: TimeSpan { .seconds(2) }

    /// The cancelled attempt's end never came: the controller broke §7.8.13. The engine stops
    /// waiting for it (so a waiting or later `.connect` goes ahead) and reports the fault; a late
    /// report of it is taken for nothing (no attempt is pending, or it names the wrong peer).
    mutating func cancelledAttemptEndOverdue() {
        guard let pending = pendingConnection, pending.requestID == nil, pending.deadline <= now else { return }
        pendingConnection = nil
        emit(.controllerFault(.cancelledConnectionAttemptNeverEnded(peer: pending.peer)))
    }
}

#endif  // !BLUEWIRE_NO_CENTRAL
