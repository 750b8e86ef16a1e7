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

extension BluetoothHost {
    /// The connection state of `address`: `Disconnected.Initial` for a peer the host never connected
    /// to, else where its machine is now — Disconnected.Connecting while `connect(to:)` waits,
    /// Connected.* while linked, Disconnected.Initial after a disconnection or a cancelled attempt, and
    /// `Error` after a failure (connection failed or timed out, ATT transaction timeout, transport lost,
    /// controller Hardware Error) until `reset(_:)`.
    public func state(of address: BluetoothAddress) -> ConnectionState {
        engineState(engineHost, of: address)
    }

    /// Why `address`'s machine is in `Error`, while it is.
    public func failure(of address: BluetoothAddress) -> ConnectionFailureCause? {
        engineFailure(engineHost, of: address)
    }

    /// Every transition of `address`'s connection state machine from this call on, across
    /// connections (each with its trigger, and for `Error` the cause). The sequence ends when the host
    /// closes or the consumer stops iterating.
    public func transitions(of address: BluetoothAddress) -> AsyncStream<PeerTransition> {
        engineTransitions(of: address)
    }

    /// Leaves `Error` for `Disconnected.Initial` (the design's `Reset`): the only way out of `Error`,
    /// so that the application sees a failure and decides when to start over (`connect(to:)` is
    /// refused in `Error`).
    /// - Throws: `.refused` naming the state and `Reset` when `address` is not in `Error`.
    public func reset(_ address: BluetoothAddress) throws(HostError) {
        try engineReset(engineHost, address)
    }
}
