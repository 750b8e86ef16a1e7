import BluewireGATT

/// The rows of the connection state machine's table (Docs/Design.md, the doc comment of
/// `ConnectionStateMachine`) that each client procedure walks, written once for the three places that
/// check a peer's machine against them: the engine on the virtual link (`EngineAppPhaseTests`), a
/// `BluetoothHost` on the virtual link (`ConnectionStateMachineHostTests`) and a host against bumble's
/// peripheral (`ConnectionStateMachineInteropTests`). The table itself, every (state, trigger) pair, is
/// `ConnectionStateMachineTests`' matrix; this is what a session of procedures must produce, in order.
public enum ConnectedTransitions {
    /// One transition: its trigger and the state it reaches (the state it leaves is the one before).
    public typealias Step = (trigger: ConnectionTrigger, to: ConnectionState)

    /// LE Create Connection, then LE Connection Complete.
    public static let connect: [Step] = [(.connect, .disconnected(.connecting)), (.connected, .connected(.idle))]
    /// Disconnect from any connected state, handled by the Connected superstate.
    public static let disconnect: [Step] = [(.disconnect, .initial)]
    /// A service discovery; it forgets the characteristics found before (and a subscription with them).
    public static let discoverServices: [Step] = [(.discoverServices, .connected(.discoveringServices)), (.operationCompleted, .connected(.idle))]
    public static let discoverCharacteristics: [Step] = [
        (.discoverCharacteristics, .connected(.discoveringCharacteristics)), (.operationCompleted, .connected(.discoveredCharacteristic)),
    ]

    /// A characteristic read, with notifications on or off (it returns to the state it left).
    public static func read(notifying: Bool = false) -> [Step] {
        [(.read, .connected(.readingCharacteristic(notificationsEnabled: notifying))), (.operationCompleted, resting(notifying))]
    }

    /// A characteristic or descriptor write, with notifications on or off.
    public static func write(notifying: Bool = false) -> [Step] {
        [(.write, .connected(.writingCharacteristic(notificationsEnabled: notifying))), (.operationCompleted, resting(notifying))]
    }

    /// Subscribing: the CCCD write, then EnableNotifications once it succeeded.
    public static let subscribe: [Step] = write() + [(.enableNotifications, .connected(.notificationsEnabled))]
    /// Unsubscribing: the CCCD write, then DisableNotifications.
    public static let unsubscribe: [Step] = write(notifying: true) + [(.disableNotifications, .connected(.discoveredCharacteristic))]

    /// The GATT client session the engine and host tests both run, from Connected.Idle: every
    /// connected transition of the table. discoverServices(uuid:), discoverCharacteristics twice,
    /// read, write, subscribe, read and write while subscribed, unsubscribe, rediscover and subscribe
    /// again, then a service discovery that forgets the subscription (as Service Changed would call for).
    public static let everyConnectedPhase: [Step] = discoverServices + discoverCharacteristics + discoverCharacteristics
        + read() + write() + subscribe + read(notifying: true) + write(notifying: true) + unsubscribe
        + discoverServices + discoverCharacteristics + subscribe + discoverServices

    /// `steps` as the transitions they make from `start`, spelled as `ConnectionTransition` prints them.
    public static func path(from start: ConnectionState, _ steps: [Step]) -> [String] {
        var from = start
        return steps.map { trigger, to in
            defer { from = to }
            return "\(from) --\(trigger)--> \(to)"
        }
    }

    private static func resting(_ notifying: Bool) -> ConnectionState {
        notifying ? .connected(.notificationsEnabled) : .connected(.discoveredCharacteristic)
    }
}
