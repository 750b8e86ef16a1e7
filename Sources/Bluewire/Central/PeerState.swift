import BluewireCore
import BluewireGATT
import BluewireHCI

/// Why a peer's connection state machine went to `Error` (Docs/Design.md: `Failure` is for what
/// leaves the link or the bearer unusable).
public enum ConnectionFailureCause: Error, Sendable, CustomStringConvertible {
    /// The host failed it: connection establishment failed (`.connectionFailed` with the controller's
    /// status, `.connectionTimeout`, `.command` when LE Create Connection was refused), the transport
    /// ended (`.transport`), or the controller reported a Hardware Error (`.hardwareError`).
    case host(HostError)
    /// The ATT bearer can no longer be used: a transaction timed out (Core Vol 3 Part F §3.3.3).
    case gatt(GATTError)

    public var description: String {
        switch self {
        case .host(let error): "\(error)"
        case .gatt(let error): "\(error)"
        }
    }
}

/// One transition of a peer's connection state machine, as `BluetoothHost.transitions(of:)` reports it.
public struct PeerTransition: Sendable, CustomStringConvertible {
    /// The peer whose machine moved.
    public var peer: BluetoothAddress
    /// Where it was, the trigger, where it went.
    public var transition: ConnectionTransition
    /// For a transition to `Error`, what failed; nil otherwise.
    public var cause: ConnectionFailureCause?

    public var trigger: ConnectionTrigger { transition.trigger }
    public var to: ConnectionState { transition.to }

    public var description: String {
        cause.map { "\(peer): \(transition) (\($0))" } ?? "\(peer): \(transition)"
    }
}

/// The connection state machine of one peer address, kept by the host from `connect(to:)` (or the
/// first `transitions(of:)`) on, across connections, so the peer's state can be seen before,
/// during and after each link. Only touched on the host's executor.
final class PeerRecord {
    let address: BluetoothAddress
    private(set) var machine: ConnectionStateMachine
    /// Why the machine is in `Error`, while it is.
    private(set) var failure: ConnectionFailureCause?
    var observers: [UInt64: AsyncStream<PeerTransition>.Continuation] = [:]
    /// The GATT client session of the peer's current link, told every transition (GATTClient.state).
    var linkObserver: (@Sendable (ConnectionTransition) -> Void)?

    init(address: BluetoothAddress, state: ConnectionState = .initial) {
        self.address = address
        self.machine = ConnectionStateMachine(state: state)
    }

    var state: ConnectionState { machine.state }

    /// Fires `trigger`; a transition to `Error` records `cause`, `Reset` clears it.
    /// - Throws: the machine's refusal; nothing changes then and nobody is told.
    @discardableResult
    func fire(_ trigger: ConnectionTrigger, cause: ConnectionFailureCause? = nil) throws(ConnectionTriggerRefused) -> ConnectionTransition {
        let transition = try machine.fire(trigger)
        let reported = transition.to == .error ? cause : nil
        failure = transition.to == .error ? cause : nil
        linkObserver?(transition)
        for observer in observers.values { observer.yield(PeerTransition(peer: address, transition: transition, cause: reported)) }
        return transition
    }

    /// Ends every observer (the host closed).
    func finishObservers() {
        for observer in observers.values { observer.finish() }
        observers.removeAll()
    }
}

extension BluetoothHost {
    /// The connection state of `address`: `Disconnected.Initial` for a peer the host never connected
    /// to, else where its machine is now — Disconnected.Connecting while `connect(to:)` waits,
    /// Connected.* while linked, Disconnected.Initial after a disconnection or a cancelled attempt, and
    /// `Error` after a failure (connection failed or timed out, ATT transaction timeout, transport lost,
    /// controller Hardware Error) until `reset(_:)`.
    public func state(of address: BluetoothAddress) -> ConnectionState {
        if let engineHost { return engineState(engineHost, of: address) }
        return peers[address]?.state ?? .initial
    }

    /// Why `address`'s machine is in `Error`, while it is.
    public func failure(of address: BluetoothAddress) -> ConnectionFailureCause? {
        if let engineHost { return engineFailure(engineHost, of: address) }
        return peers[address]?.failure
    }

    /// Every transition of `address`'s connection state machine from this call on, across
    /// connections (each with its trigger, and for `Error` the cause). The sequence ends when the host
    /// closes or the consumer stops iterating.
    public func transitions(of address: BluetoothAddress) -> AsyncStream<PeerTransition> {
        if engineHost != nil { return engineTransitions(of: address) }
        let (stream, continuation) = AsyncStream<PeerTransition>.makeStream(bufferingPolicy: .unbounded)
        guard phase != .closed else {
            continuation.finish()
            return stream
        }
        let id = nextObserverID
        nextObserverID += 1
        // Registered before a new record joins a running scan, so its StartScan is reported too.
        _ = peerRecord(address) { $0.observers[id] = continuation }
        continuation.onTermination = { _ in Task { await self.endPeerObserver(address, id) } }
        return stream
    }

    func endPeerObserver(_ address: BluetoothAddress, _ id: UInt64) {
        peers[address]?.observers[id] = nil
    }

    /// Leaves `Error` for `Disconnected.Initial` (the design's `Reset`): the only way out of `Error`,
    /// so that the application sees a failure and decides when to start over (`connect(to:)` is
    /// refused in `Error`).
    /// - Throws: `.refused` naming the state and `Reset` when `address` is not in `Error`.
    public func reset(_ address: BluetoothAddress) throws(HostError) {
        if let engineHost { return try engineReset(engineHost, address) }
        let record = peerRecord(address)
        do throws(ConnectionTriggerRefused) {
            try record.fire(.reset)
        } catch {
            throw .refused(error)
        }
    }

    /// The record of `address`, made on first use (`prepare` runs on it first, new or not). A peer that
    /// becomes known while a scan runs takes part in it at once (`StartScan`), as one known before the
    /// scan started did.
    func peerRecord(_ address: BluetoothAddress, prepare: (PeerRecord) -> Void = { _ in }) -> PeerRecord {
        if let record = peers[address] {
            prepare(record)
            return record
        }
        let record = PeerRecord(address: address)
        peers[address] = record
        prepare(record)
        if scanSession != nil {
            // Cannot be refused: a new machine is in Disconnected.Initial, which accepts StartScan.
            fireExpected(.startScan, on: record)
        }
        return record
    }

    /// Fires a trigger that the record's state accepts by construction (the caller's comment says
    /// why). Should it be refused all the same, the model and the link are out of step: that is
    /// logged as an error, not ignored, and the refusal is returned for the caller to surface.
    @discardableResult
    func fireExpected(_ trigger: ConnectionTrigger, on record: PeerRecord, cause: ConnectionFailureCause? = nil) -> ConnectionTriggerRefused? {
        do throws(ConnectionTriggerRefused) {
            try record.fire(trigger, cause: cause)
            return nil
        } catch {
            log.gatt.error("state machine of \(record.address) out of step with the link: \(error)")
            return error
        }
    }

    /// `trigger` on every peer whose machine is in `state` (the scan's start, end and failure).
    func fire(_ trigger: ConnectionTrigger, onPeersIn state: ConnectionState, cause: ConnectionFailureCause? = nil) {
        for record in peers.values where record.state == state {
            // Cannot be refused: the callers pair each trigger with a state that accepts it
            // (Initial: StartScan; Scanning: StopScan, ScanCompleted, DeviceFound, Failure).
            fireExpected(trigger, on: record, cause: cause)
        }
    }
}
