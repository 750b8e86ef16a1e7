/// An event fed to the `ConnectionStateMachine`.
///
/// Triggers that start something (`StartScan`, `Connect`, `DiscoverServices`, `Read`, ...) are fired by
/// the host when it starts it; triggers that report something (`DeviceFound`, `Connected`,
/// `ScanCompleted`, `OperationCompleted`, `Failure`) when the controller or the peer reports it.
public enum ConnectionTrigger: Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Start scanning (LE Set Scan Enable / LE Set Extended Scan Enable).
    case startScan
    /// Stop scanning at the host's request.
    case stopScan
    /// The scan ended by itself (its duration elapsed, LE Scan Timeout event).
    case scanCompleted
    /// An advertising report arrived while scanning.
    case deviceFound
    /// Create a connection (LE Create Connection / LE Extended Create Connection).
    case connect
    /// The controller reported the connection complete (LE Connection Complete with success).
    case connected
    /// Start discovering primary services.
    case discoverServices
    /// Start discovering the characteristics of a service.
    case discoverCharacteristics
    /// Start reading a characteristic value.
    case read
    /// Start writing a characteristic value.
    case write
    /// Notifications or indications were enabled in a characteristic's CCCD (the write succeeded).
    case enableNotifications
    /// Notifications and indications were disabled in the CCCD (the write succeeded).
    case disableNotifications
    /// The outstanding GATT procedure finished: with its result, or with an ATT Error Response,
    /// which is an answer from the server and leaves the bearer usable.
    case operationCompleted
    /// The link was disconnected (by either side) or a pending connection attempt was cancelled.
    case disconnect
    /// A failure that leaves the link or the bearer unusable: connection establishment failed, an ATT
    /// transaction timed out (Core Vol 3 Part F §3.3.3: no further ATT PDUs may be sent on the bearer),
    /// or the controller failed.
    case failure
    /// Leave `Error` and start over from `Disconnected.Initial`.
    case reset

    /// The trigger's name as Docs/Design.md spells it.
    public var description: String {
        switch self {
        case .startScan: return "StartScan"
        case .stopScan: return "StopScan"
        case .scanCompleted: return "ScanCompleted"
        case .deviceFound: return "DeviceFound"
        case .connect: return "Connect"
        case .connected: return "Connected"
        case .discoverServices: return "DiscoverServices"
        case .discoverCharacteristics: return "DiscoverCharacteristics"
        case .read: return "Read"
        case .write: return "Write"
        case .enableNotifications: return "EnableNotifications"
        case .disableNotifications: return "DisableNotifications"
        case .operationCompleted: return "OperationCompleted"
        case .disconnect: return "Disconnect"
        case .failure: return "Failure"
        case .reset: return "Reset"
        }
    }
}
