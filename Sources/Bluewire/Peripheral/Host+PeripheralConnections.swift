import BluewireCore
import BluewireGATT

extension BluetoothHost {
    /// The live link with the HCI handle `handle`, as a `Connection`, or nil when no link has it.
    ///
    /// Peripheral events name links by handle (`PeripheralRead.connection`, `GATTSubscription`...);
    /// this turns such a handle into the value that `notify`, `indicate`, `serverState(for:)` and the
    /// ACL queue take, which the host refuses once its link has ended. A handle names a link only
    /// while it lasts: the controller may give it to a later link (Core Vol 4 Part E §7.7.65.1), so
    /// ask while the link is up (as a `PeripheralEvent` arrives, or from a dynamic value's handler),
    /// and compare `peer` when it matters which central it was.
    public func connection(handle: UInt16) -> Connection? {
        guard let link = shell.links[handle] else { return nil }
        return connectionValue(handle: handle, peer: link.peer, role: link.role)
    }

    /// The connection `event` is about, nil for advertising events.
    ///
    /// `.connected` carries it; `.disconnected` names the ended link's handle and peer, and gives a
    /// `Connection` equal to the one `.connected` gave (no longer live: operations on it are
    /// refused). The other events name a live link by handle, resolved as `connection(handle:)`
    /// does: nil once that link has ended.
    public func connection(of event: PeripheralEvent) -> Connection? {
        switch event {
        case .connected(let connection):
            return connection
        case .disconnected(let handle, let peer, _):
            return connectionValue(handle: handle, peer: peer, role: .peripheral)
        default:
            return event.connectionHandle.flatMap { connection(handle: $0) }
        }
    }
}

extension PeripheralEvent {
    /// The HCI handle of the link the event is about; nil for advertising events. Turn it into a
    /// `Connection` with `BluetoothHost.connection(handle:)` or `connection(of:)`.
    public var connectionHandle: UInt16? {
        switch self {
        case .connected(let connection): connection.handle
        case .disconnected(let handle, _, _): handle
        case .mtuChanged(let handle, _): handle
        case .read(let read): read.connection
        case .write(let write): write.connection
        case .subscriptionChanged(let subscription): subscription.connection
        case .indicationConfirmed(let handle, _): handle
        case .indicationDropped(let handle, _): handle
        case .requestRefused(let handle, _, _, _): handle
        case .advertisingStarted, .advertisingStopped: nil
        }
    }
}
