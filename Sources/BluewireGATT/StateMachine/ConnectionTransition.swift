/// One transition the `ConnectionStateMachine` took: what it was in, what happened, where it went,
/// and which level of the state hierarchy handled the trigger.
public struct ConnectionTransition: Hashable, Sendable, CustomStringConvertible {
    /// The level of the hierarchy whose transition fired.
    public enum Handler: Hashable, Sendable {
        /// The substate itself (or the top-level `Error` state).
        case state
        /// The `Disconnected` superstate, on behalf of one of its substates.
        case disconnectedSuperstate
        /// The `Connected` superstate, on behalf of one of its substates.
        case connectedSuperstate
    }

    public var from: ConnectionState
    public var trigger: ConnectionTrigger
    public var to: ConnectionState
    public var handledBy: Handler

    @inlinable
    public init(from: ConnectionState, trigger: ConnectionTrigger, to: ConnectionState, handledBy: Handler) {
        self.from = from
        self.trigger = trigger
        self.to = to
        self.handledBy = handledBy
    }

    /// Whether the state did not change (an internal transition such as `DeviceFound` while scanning).
    @inlinable
    public var isSelfTransition: Bool { from == to }

    public var description: String { "\(from) --\(trigger)--> \(to)" }
}

/// A trigger the current state does not accept. The machine's state is unchanged.
public struct ConnectionTriggerRefused: Error, Hashable, Sendable, CustomStringConvertible {
    /// The state that refused the trigger.
    public var state: ConnectionState
    /// The refused trigger.
    public var trigger: ConnectionTrigger

    @inlinable
    public init(state: ConnectionState, trigger: ConnectionTrigger) {
        self.state = state
        self.trigger = trigger
    }

    public var description: String { "connection state \(state) refuses trigger \(trigger)" }
}
