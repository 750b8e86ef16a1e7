import BluewireCore
import BluewireGATT

extension BluetoothHost {
    /// The GATT client session of `connection`; for a link that is already gone, a session that fails
    /// every operation with the reason (or Unknown Connection Identifier when none is known).
    func gattClientSession(for connection: Connection) -> GATTClientSession {
        engineGATTClientSession(for: connection)
    }

    /// Fires `trigger` on the link's state machine for a GATT operation (`cause`: what failed, for
    /// `Failure`).
    /// - Throws: `.refused` naming state and trigger, or `.disconnected` when the link is gone.
    func fireGATTTrigger(_ trigger: ConnectionTrigger, on connection: Connection, cause: ConnectionFailureCause? = nil) throws(GATTError) {
        try engineFireGATTTrigger(engineHost, trigger, on: connection, cause: cause)
    }

    // MARK: Notification registrations

    /// Registers a queue for notifications and indications of `valueHandle`, effective at once (so
    /// a caller that registers before writing the CCCD misses nothing). The registration ends with
    /// `endNotifications`, when the link ends, or when the last reference to it goes. Nil if the
    /// link is gone.
    func registerNotifications(
        on connection: Connection, valueHandle: UInt16, handler: (@Sendable (GATTNotification) -> Void)? = nil
    ) -> (registration: NotificationRegistration, id: UInt64)? {
        engineRegisterNotifications(on: connection, valueHandle: valueHandle, handler: handler)
    }

    /// Ends a registration: its subscriber gets what is buffered, then the end.
    func endNotifications(handle: UInt16, valueHandle: UInt16, id: UInt64) {
        engineEndNotifications(handle: handle, valueHandle: valueHandle, id: id)
    }
}
