import BluewireHostEngine

extension EngineHost {
    /// Calls `handler` with every Handle Value Notification and Indication a peer's server sends
    /// (indications are confirmed already, Core Vol 3 Part F §3.4.7.2), synchronously on the host's
    /// executor, in arrival order, as the engine decodes each ACL packet: no task, no queue and no
    /// copy between the transport and the handler (the value is a slice of the packet it came in).
    /// The handler must return quickly and must not wait: the next packet is decoded after it. The
    /// `.notification` events in `events()` still arrive too. Nil removes it.
    ///
    /// The subscription itself (the CCCD write) is `.gatt(connection:, .subscribe(...))`.
    public func setNotificationHandler(
        _ handler: (@Sendable (_ connection: UInt16, _ notification: GATTNotification) -> Void)?
    ) {
        notificationHandler = handler
    }
}
