// # Connection state machine
//
// A hierarchical model of one central-side connection, sans-I/O: the host fires triggers as it starts
// things and as the controller and peer report things; the machine says whether that is allowed now
// and where it goes. It does no I/O and reads no clock.
//
// ```
// Disconnected ─┬─ Initial ──StartScan──▶ Scanning ──StopScan/ScanCompleted──▶ Initial
//               │     └──────Connect──────▶ Connecting ◀──Connect── Scanning
//               └─ Connecting ──Connected──▶ Connected.Idle      (Disconnect cancels: → Initial)
// Connected ─── Idle ──DiscoverServices──▶ DiscoveringServices ──OperationCompleted──▶ Idle
//               Idle ──DiscoverCharacteristics──▶ DiscoveringCharacteristics
//                        ──OperationCompleted──▶ DiscoveredCharacteristic
//               DiscoveredCharacteristic ──Read/Write──▶ Reading/Writing ──OperationCompleted──▶ back
//               DiscoveredCharacteristic ⇄ NotificationsEnabled  (EnableNotifications / DisableNotifications)
// any Connected substate ──Disconnect──▶ Disconnected.Initial;  any non-Error state ──Failure──▶ Error
// Error ──Reset──▶ Disconnected.Initial
// ```
//
// The transition table is the doc comment of `ConnectionStateMachine` below.
//
// ## Choices (and why)
//
// - One procedure at a time: while discovering, reading or writing, only `OperationCompleted`,
//   `Disconnect` and `Failure` are accepted, because ATT allows one outstanding request per bearer
//   (Core Vol 3 Part F §3.3.2) and GATT procedures are built on it.
// - Read, Write and EnableNotifications need a discovered characteristic: in `Idle` they are refused
//   (a read before discovery has no handle to read).
// - Service discovery ends in `Idle`: the machine tracks phases, not the attribute database, so
//   `DiscoverCharacteristics` is accepted in `Idle` (the service range may come from a finished
//   discovery or from a cache) and in `DiscoveredCharacteristic` (another service).
// - `DiscoverServices` is accepted from `NotificationsEnabled` because a Service Changed indication
//   (Vol 3 Part G §7.1) requires rediscovery; it forgets the subscription, since the handles it
//   referred to may no longer exist. `DiscoverCharacteristics` is not, as completing it would land in
//   `DiscoveredCharacteristic` and silently drop the subscription.
// - EnableNotifications/DisableNotifications are fired once the CCCD write succeeded, so a failed
//   subscribe leaves the state as it was. EnableNotifications in `NotificationsEnabled` and
//   DisableNotifications in `DiscoveredCharacteristic` are refused (nothing to change).
// - An ATT Error Response completes an operation (`OperationCompleted`): the server answered and the
//   bearer is still usable. `Failure` is for what leaves the link or bearer unusable and is accepted
//   in every state but `Error` (through both superstates).
// - `Error` accepts only `Reset`; a late `Disconnect` or `Failure` there is refused, so the
//   application sees the error and decides when to start over.
// - Connect is accepted while scanning (the host stops the scan and connects); `Disconnect` while
//   connecting cancels the attempt (LE Create Connection Cancel). `StartScan` is refused while
//   connected: this model does not scan and stay connected at once.

/// The central's connection state machine: hierarchical states, a documented transition table,
/// typed refusals, observable transitions (the choices behind the table are in the file header).
///
/// ## Transition table
///
/// Every (state, trigger) pair not listed is refused with `ConnectionTriggerRefused`, and the state is
/// unchanged. A substate is asked first; if it has no transition, its superstate is asked.
///
/// | State                         | Trigger                 | Next state                                  | Handled by   |
/// |-------------------------------|-------------------------|---------------------------------------------|--------------|
/// | Disconnected.Initial          | StartScan               | Disconnected.Scanning                       | state        |
/// | Disconnected.Initial          | Connect                 | Disconnected.Connecting                     | state        |
/// | Disconnected.Scanning         | StopScan                | Disconnected.Initial                        | state        |
/// | Disconnected.Scanning         | ScanCompleted           | Disconnected.Initial                        | state        |
/// | Disconnected.Scanning         | DeviceFound             | Disconnected.Scanning (self)                | state        |
/// | Disconnected.Scanning         | Connect                 | Disconnected.Connecting                     | state        |
/// | Disconnected.Connecting       | Connected               | Connected.Idle                              | state        |
/// | Disconnected.Connecting       | Disconnect              | Disconnected.Initial                        | state        |
/// | Disconnected.*                | Failure                 | Error                                       | Disconnected |
/// | Connected.Idle                | DiscoverServices        | Connected.DiscoveringServices               | state        |
/// | Connected.Idle                | DiscoverCharacteristics | Connected.DiscoveringCharacteristics        | state        |
/// | Connected.DiscoveringServices | OperationCompleted      | Connected.Idle                              | state        |
/// | Connected.DiscoveringCharacteristics | OperationCompleted | Connected.DiscoveredCharacteristic        | state        |
/// | Connected.DiscoveredCharacteristic | DiscoverServices   | Connected.DiscoveringServices               | state        |
/// | Connected.DiscoveredCharacteristic | DiscoverCharacteristics | Connected.DiscoveringCharacteristics   | state        |
/// | Connected.DiscoveredCharacteristic | Read               | Connected.ReadingCharacteristic(off)        | state        |
/// | Connected.DiscoveredCharacteristic | Write              | Connected.WritingCharacteristic(off)        | state        |
/// | Connected.DiscoveredCharacteristic | EnableNotifications | Connected.NotificationsEnabled             | state        |
/// | Connected.ReadingCharacteristic(h) | OperationCompleted | h on: NotificationsEnabled, off: DiscoveredCharacteristic | state |
/// | Connected.WritingCharacteristic(h) | OperationCompleted | h on: NotificationsEnabled, off: DiscoveredCharacteristic | state |
/// | Connected.NotificationsEnabled | Read                   | Connected.ReadingCharacteristic(on)         | state        |
/// | Connected.NotificationsEnabled | Write                  | Connected.WritingCharacteristic(on)         | state        |
/// | Connected.NotificationsEnabled | DisableNotifications   | Connected.DiscoveredCharacteristic          | state        |
/// | Connected.NotificationsEnabled | DiscoverServices       | Connected.DiscoveringServices               | state        |
/// | Connected.*                   | Disconnect              | Disconnected.Initial                        | Connected    |
/// | Connected.*                   | Failure                 | Error                                       | Connected    |
/// | Error                         | Reset                   | Disconnected.Initial                        | state        |
///
/// ```swift
/// var machine = ConnectionStateMachine()
/// try machine.fire(.connect)         // Disconnected.Initial → Disconnected.Connecting
/// try machine.fire(.connected)       // → Connected.Idle
/// try machine.fire(.read)            // throws ConnectionTriggerRefused(Connected.Idle, Read)
/// ```
public struct ConnectionStateMachine: Sendable {
    /// The current state.
    public private(set) var state: ConnectionState
    /// Called after every transition taken (refusals do not call it).
    public var observer: (@Sendable (ConnectionTransition) -> Void)?

    public init(state: ConnectionState = .initial, observer: (@Sendable (ConnectionTransition) -> Void)? = nil) {
        self.state = state
        self.observer = observer
    }

    /// Applies `trigger`: moves to the next state, tells the observer and returns the transition.
    /// - Throws: `ConnectionTriggerRefused` if the current state (and its superstate) do not accept
    ///   `trigger`; the state is then unchanged and the observer is not called.
    @discardableResult
    public mutating func fire(_ trigger: ConnectionTrigger) throws(ConnectionTriggerRefused) -> ConnectionTransition {
        guard let transition = ConnectionStateMachine.transition(from: state, on: trigger) else {
            throw ConnectionTriggerRefused(state: state, trigger: trigger)
        }
        state = transition.to
        observer?(transition)
        return transition
    }

    /// Whether the current state accepts `trigger`.
    @inlinable
    public func accepts(_ trigger: ConnectionTrigger) -> Bool {
        ConnectionStateMachine.transition(from: state, on: trigger) != nil
    }

    /// The triggers the current state accepts, in declaration order.
    public var acceptedTriggers: [ConnectionTrigger] {
        ConnectionTrigger.allCases.filter { accepts($0) }
    }

    /// The transition table: the transition `trigger` takes from `state`, or nil if it is refused.
    /// The substate is asked first, then its superstate.
    public static func transition(from state: ConnectionState, on trigger: ConnectionTrigger) -> ConnectionTransition? {
        if let next = substateTransition(state, trigger) {
            return ConnectionTransition(from: state, trigger: trigger, to: next, handledBy: .state)
        }
        switch state {
        case .disconnected:
            guard trigger == .failure else { return nil }
            return ConnectionTransition(from: state, trigger: trigger, to: .error, handledBy: .disconnectedSuperstate)
        case .connected:
            switch trigger {
            case .disconnect:
                return ConnectionTransition(from: state, trigger: trigger, to: .initial, handledBy: .connectedSuperstate)
            case .failure:
                return ConnectionTransition(from: state, trigger: trigger, to: .error, handledBy: .connectedSuperstate)
            default:
                return nil
            }
        case .error:
            return nil
        }
    }

    static func substateTransition(_ state: ConnectionState, _ trigger: ConnectionTrigger) -> ConnectionState? {
        switch (state, trigger) {
        case (.disconnected(.initial), .startScan): return .disconnected(.scanning)
        case (.disconnected(.initial), .connect): return .disconnected(.connecting)

        case (.disconnected(.scanning), .stopScan): return .initial
        case (.disconnected(.scanning), .scanCompleted): return .initial
        case (.disconnected(.scanning), .deviceFound): return .disconnected(.scanning)
        case (.disconnected(.scanning), .connect): return .disconnected(.connecting)

        case (.disconnected(.connecting), .connected): return .connected(.idle)
        case (.disconnected(.connecting), .disconnect): return .initial

        case (.connected(.idle), .discoverServices): return .connected(.discoveringServices)
        case (.connected(.idle), .discoverCharacteristics): return .connected(.discoveringCharacteristics)

        case (.connected(.discoveringServices), .operationCompleted): return .connected(.idle)
        case (.connected(.discoveringCharacteristics), .operationCompleted):
            return .connected(.discoveredCharacteristic)

        case (.connected(.discoveredCharacteristic), .discoverServices): return .connected(.discoveringServices)
        case (.connected(.discoveredCharacteristic), .discoverCharacteristics):
            return .connected(.discoveringCharacteristics)
        case (.connected(.discoveredCharacteristic), .read):
            return .connected(.readingCharacteristic(notificationsEnabled: false))
        case (.connected(.discoveredCharacteristic), .write):
            return .connected(.writingCharacteristic(notificationsEnabled: false))
        case (.connected(.discoveredCharacteristic), .enableNotifications): return .connected(.notificationsEnabled)

        case (.connected(.readingCharacteristic(let on)), .operationCompleted),
            (.connected(.writingCharacteristic(let on)), .operationCompleted):
            return on ? .connected(.notificationsEnabled) : .connected(.discoveredCharacteristic)

        case (.connected(.notificationsEnabled), .read):
            return .connected(.readingCharacteristic(notificationsEnabled: true))
        case (.connected(.notificationsEnabled), .write):
            return .connected(.writingCharacteristic(notificationsEnabled: true))
        case (.connected(.notificationsEnabled), .disableNotifications): return .connected(.discoveredCharacteristic)
        case (.connected(.notificationsEnabled), .discoverServices): return .connected(.discoveringServices)

        case (.error, .reset): return .initial

        default: return nil
        }
    }
}
