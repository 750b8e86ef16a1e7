/// A state of the central's connection state machine (see `ConnectionStateMachine` for the table).
///
/// The states are hierarchical: `Disconnected` and `Connected` are superstates whose substates
/// inherit their transitions (a `Disconnect` is handled by `Connected` for every connected substate),
/// and `Error` is a top-level state left only by `Reset`.
public enum ConnectionState: Hashable, Sendable, CustomStringConvertible {
    /// No link exists.
    case disconnected(Disconnected)
    /// An LE link is up and the ATT bearer on its fixed channel is usable.
    case connected(Connected)
    /// Something failed that leaves the link or bearer unusable (an ATT transaction timeout,
    /// Core Vol 3 Part F §3.3.3, or a controller failure); only `Reset` leaves it.
    case error

    /// Substates of `Disconnected`.
    public enum Disconnected: Hashable, Sendable, CaseIterable {
        /// Nothing in progress: the state after power-up, `StopScan`, `Disconnect` and `Reset`.
        case initial
        /// The controller is scanning for advertisements.
        case scanning
        /// A connection is being created (LE Create Connection sent, no Connection Complete yet).
        case connecting
    }

    /// Substates of `Connected`.
    ///
    /// `readingCharacteristic` and `writingCharacteristic` remember whether notifications were enabled
    /// when the operation started (a shallow history), so that `OperationCompleted` returns to
    /// `NotificationsEnabled` rather than dropping the subscription from the model.
    public enum Connected: Hashable, Sendable {
        /// Connected; no procedure outstanding and no characteristic discovered yet (or discovery was
        /// restarted, which invalidates what was known).
        case idle
        /// A primary service discovery procedure is outstanding.
        case discoveringServices
        /// A characteristic discovery procedure is outstanding.
        case discoveringCharacteristics
        /// At least one characteristic is known; reads, writes and subscriptions are possible.
        case discoveredCharacteristic
        /// A characteristic value read is outstanding.
        case readingCharacteristic(notificationsEnabled: Bool)
        /// A characteristic value write is outstanding.
        case writingCharacteristic(notificationsEnabled: Bool)
        /// The client characteristic configuration has notifications (or indications) enabled.
        case notificationsEnabled

        /// Every connected substate, including both histories of the in-flight states.
        public static let allCases: [Connected] = [
            .idle, .discoveringServices, .discoveringCharacteristics, .discoveredCharacteristic,
            .readingCharacteristic(notificationsEnabled: false), .readingCharacteristic(notificationsEnabled: true),
            .writingCharacteristic(notificationsEnabled: false), .writingCharacteristic(notificationsEnabled: true),
            .notificationsEnabled,
        ]
    }

    /// The state after power-up.
    public static let initial = ConnectionState.disconnected(.initial)

    /// Every state the machine can be in (13: three disconnected, nine connected, error).
    public static var allStates: [ConnectionState] {
        Disconnected.allCases.map { .disconnected($0) } + Connected.allCases.map { .connected($0) } + [.error]
    }

    /// Whether this is a substate of `Connected`.
    @inlinable
    public var isConnected: Bool {
        if case .connected = self { return true }
        return false
    }

    /// The superstate's name followed by the substate's, as Docs/Design.md names them
    /// (`Connected.ReadingCharacteristic(notifications on)`).
    public var description: String {
        switch self {
        case .disconnected(let sub):
            switch sub {
            case .initial: return "Disconnected.Initial"
            case .scanning: return "Disconnected.Scanning"
            case .connecting: return "Disconnected.Connecting"
            }
        case .connected(let sub):
            switch sub {
            case .idle: return "Connected.Idle"
            case .discoveringServices: return "Connected.DiscoveringServices"
            case .discoveringCharacteristics: return "Connected.DiscoveringCharacteristics"
            case .discoveredCharacteristic: return "Connected.DiscoveredCharacteristic"
            case .readingCharacteristic(let on):
                return "Connected.ReadingCharacteristic" + (on ? "(notifications on)" : "")
            case .writingCharacteristic(let on):
                return "Connected.WritingCharacteristic" + (on ? "(notifications on)" : "")
            case .notificationsEnabled: return "Connected.NotificationsEnabled"
            }
        case .error:
            return "Error"
        }
    }
}
