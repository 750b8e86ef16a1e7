import BluewireGATT

// # The scan's state machine
//
// Scanning has its own `ConnectionStateMachine` (Docs/Design.md), apart from the peers' machines:
// a scan concerns no one peer, and a peer's machine may be connected while the application scans.
// It lives as long as the engine: Initial → Scanning on `.startScan`, back on the stop; Failure with
// its cause when the controller refuses the scan's commands or fails while scanning (Hardware Error,
// transport lost), and then `.startScan` is refused until `.resetScan`, so the application sees the
// failure and decides when to start over (as on a peer's machine).

extension HostEngine {
    /// Where the scan's machine is: Disconnected.Initial, Disconnected.Scanning while a scan runs (from
    /// the request on, until its stop is answered), or `Error` after a failure, until `.resetScan`.
    public var scanState: ConnectionState { scanMachine.machine.state }

    /// Why the scan's machine is in `Error`, while it is.
    public var scanFailure: HostEngineError? { scanMachine.failure }

    /// Fires `trigger` on the scan's machine; a transition to `Error` records `cause`, any other clears
    /// it. Every transition but DeviceFound's self-transition is emitted as `.scanStateChanged`.
    /// - Throws: `.refused` naming the state and the trigger; nothing changes then.
    mutating func fireScan(_ trigger: ConnectionTrigger, cause: HostEngineError? = nil) throws(HostEngineError) {
        let transition: ConnectionTransition
        do throws(ConnectionTriggerRefused) {
            transition = try scanMachine.machine.fire(trigger)
        } catch {
            throw .refused(state: error.state, trigger: error.trigger)
        }
        scanMachine.failure = transition.to == .error ? cause : nil
        if trigger != .deviceFound { emit(.scanStateChanged(transition, cause: scanMachine.failure)) }
        // The known peers in Initial scan along (HostEngine+WatchedPeers).
        peersFollowScan(trigger, cause: cause)
    }

    /// Fires a scan trigger the machine accepts by construction (each caller says why); a refusal all
    /// the same means the model and the scan are out of step and is reported as `.stateRefused` (with
    /// our own address: the scan has no peer) rather than dropped.
    mutating func fireScanExpected(_ trigger: ConnectionTrigger, cause: HostEngineError? = nil) {
        do throws(HostEngineError) {
            try fireScan(trigger, cause: cause)
        } catch {
            emit(.stateRefused(peer: configuration.randomAddress, error))
        }
    }

    /// `.resetScan`: `Error` → Disconnected.Initial; refused with `.refused` in any other state.
    mutating func resetScan(_ id: HostRequestID) {
        do throws(HostEngineError) {
            try fireScan(.reset)
            complete(id, .success(.done))
        } catch {
            complete(id, .failure(error))
        }
    }

    /// The controller failed or went away while a scan ran (or started): Failure with `cause`, and the
    /// scan ends (`.scanStopped`). Nothing happens when no scan was under way.
    mutating func failScan(cause: HostEngineError) {
        guard scan != nil else { return }
        scan = nil
        // Accepted: a scan exists only while the machine is in Scanning (startScan fires StartScan
        // before it makes one, and every path that ends it clears `scan`).
        fireScanExpected(.failure, cause: cause)
        emit(.scanStopped)
    }
}
