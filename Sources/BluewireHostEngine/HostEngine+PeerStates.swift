import BluewireCore
import BluewireGATT
import BluewireHCI

// # Connection state machines per peer
//
// The engine keeps one `ConnectionStateMachine` (Docs/Design.md) per peer address from the first
// `.connect` to it on, across connections, so an application (or `EngineHost`) can see
// Disconnected.Connecting while an attempt runs, Connected.* while linked, and Error, with its cause,
// after a failure, until `.reset`. Every transition is reported as `.stateChanged`; a trigger the
// machine refuses fails the request that asked for it with `.refused`.
//
// Peripheral-role links have no machine: the table models the central's side of a connection.

/// The connection state machine of one peer address, and why it is in `Error` while it is.
struct PeerMachine: Sendable {
    var machine = ConnectionStateMachine()
    var failure: HostEngineError?
}

extension HostEngine {
    /// The connection state of `address`: `Disconnected.Initial` for a peer never connected to, else
    /// where its machine is now (Disconnected.Connecting while `.connect` waits, Connected.Idle while
    /// linked, Disconnected.Initial after a disconnection or a cancelled attempt, `Error` after a failed
    /// or timed-out attempt, an ATT transaction timeout or a Hardware Error, until `.reset`).
    public func state(of address: BluetoothAddress) -> ConnectionState {
        peerMachines[address]?.machine.state ?? .initial
    }

    /// Why `address`'s machine is in `Error`, while it is.
    public func failure(of address: BluetoothAddress) -> HostEngineError? {
        peerMachines[address]?.failure
    }

    /// Fires `trigger` on `peer`'s machine (made on first use, HostEngine+WatchedPeers); a transition to `Error` records
    /// `cause`, any other transition clears it. Every transition is emitted as `.stateChanged`.
    /// - Throws: `.refused` naming the state and the trigger; nothing changes then and nothing is emitted.
    mutating func fire(_ trigger: ConnectionTrigger, peer: BluetoothAddress, cause: HostEngineError? = nil) throws(HostEngineError) {
        // A peer that becomes known joins a running scan first (HostEngine+WatchedPeers).
        knowPeer(peer)
        var record = peerMachines[peer] ?? PeerMachine()
        let transition: ConnectionTransition
        do throws(ConnectionTriggerRefused) {
            transition = try record.machine.fire(trigger)
        } catch {
            throw .refused(state: error.state, trigger: error.trigger)
        }
        let reported = transition.to == .error ? cause : nil
        record.failure = reported
        peerMachines[peer] = record
        emit(.stateChanged(peer: peer, transition, cause: reported))
    }

    /// Fires a trigger the peer's state accepts by construction (each caller says why). Should it be
    /// refused all the same, the model and the link are out of step; the refusal is reported as a
    /// `.stateRefused` event rather than dropped.
    mutating func fireExpected(_ trigger: ConnectionTrigger, peer: BluetoothAddress, cause: HostEngineError? = nil) {
        do throws(HostEngineError) {
            try fire(trigger, peer: peer, cause: cause)
        } catch {
            emit(.stateRefused(peer: peer, error))
        }
    }

    /// `.reset(address)`: `Error` → `Disconnected.Initial`, the only way out of `Error` (so the
    /// application sees a failure and decides when to start over; `.connect` is refused in `Error`).
    /// Refused with `.refused` in any other state.
    mutating func resetPeer(_ id: HostRequestID, _ address: BluetoothAddress) {
        do throws(HostEngineError) {
            try fire(.reset, peer: address)
            complete(id, .success(.done))
        } catch {
            complete(id, .failure(error))
        }
    }

    /// Failure, with `cause`, on every peer with something under way (a pending attempt or a link):
    /// the controller failed (Hardware Error) or the transport ended. A peer in Disconnected.Initial
    /// has nothing to fail and stays there; one already in `Error` keeps its first cause.
    mutating func failEveryPeer(cause: HostEngineError) {
        // The peers to fail, chosen by their states now, then failed in ascending address order.
        // Addresses only, sorted by insertion (a handful of peers): the stdlib's sort of the map's
        // (address, machine) pairs copied every machine and linked its merge sort into firmware.
        var peers: [BluetoothAddress] = []
        for index in peerMachines.indices {
            switch peerMachines.values[index].machine.state {
            case .disconnected(.initial), .error: continue
            // Accepted: Failure is taken by both superstates, i.e. in every state but Error.
            default: peers.append(peerMachines.keys[index])
            }
        }
        var i = 1
        while i < peers.count {
            let peer = peers[i]
            var j = i
            while j > 0, peer.value < peers[j - 1].value {
                peers[j] = peers[j - 1]
                j -= 1
            }
            peers[j] = peer
            i += 1
        }
        for peer in peers { fireExpected(.failure, peer: peer, cause: cause) }
    }

    /// The transport to the controller ended (the HCI socket or UART closed or failed): every peer
    /// with something under way, and the scan, go to `Error` with `.transportEnded`, as after a Hardware Error,
    /// and raw commands (`HostRequest.command`) still unanswered fail with `.command(.cancelled)`.
    /// The engine does not run again until `.start`.
    public mutating func transportEnded() {
        failEveryPeer(cause: .transportEnded)
        failScan(cause: .transportEnded)
        // No answer can come for the application's raw commands any more: they end now, cancelled.
        cancelRawCommands()
    }

    /// The application closes the host with links up, and the transport goes with it, so no
    /// Disconnection Complete will come: each link ends here as if the controller had reported it with
    /// `reason` (Core Vol 4 Part E §7.7.5). Its peer's machine takes Disconnect (one in Error stays
    /// there), what waits on the link fails with `.disconnected(reason)`, and `.disconnected` is
    /// emitted. Anything the engine would send in answer (advertising resumed after a peripheral link)
    /// is for a host that goes on: the caller, which is closing, drops it.
    public mutating func closeLinks(reason: HCIStatus) {
        for handle in links.sortedKeys { linkDisconnected(handle: handle, reason: reason) }
    }
}
