import BluewireHCI

/// What happened to a `RemotePeripheral`'s link, in order (`RemotePeripheral.events()`).
public enum RemotePeripheralEvent: Sendable, Hashable {
    /// A connection attempt started (`connect()`, or auto-connect for a queued operation).
    case connecting
    /// The link is up (and its MTU exchanged, when the configuration asks for it); `count` is how many
    /// links this peripheral has had, this one included (2 and up: a reconnection).
    case connected(EngineConnection, count: Int)
    /// The subscriptions still wanted were enabled again on the new link (`count` of them).
    case resubscribed(count: Int)
    /// The link ended, with the reason the controller reported.
    case disconnected(reason: HCIStatus)
    /// The idle timer expired with nothing queued: the peripheral is disconnecting.
    case idleDisconnect
}
