import BluewireCore
import BluewireGATT

// Read-only views of what the local GATT server holds for each central, so that a host can show that
// no central makes it grow without bound (`BluetoothHost.serverState(for:)`). They read existing
// state only; an image that never calls them (the firmware) drops them.
extension HostEngine {
    /// The ATT_MTU the server uses on `connection` (23 until an exchange, Core Vol 3 Part F §3.4.2).
    public func serverMTU(connection: UInt16) -> Int { server.mtu(for: connection) }

    /// Prepare Write Requests queued by the central on `connection` (§3.4.6.1), bounded by
    /// `GATTServerConfiguration.maximumPreparedWrites`.
    public func preparedWrites(connection: UInt16) -> Int { server.preparedWriteCount(for: connection) }

    /// Indications waiting on `connection` behind the one awaiting its confirmation (§3.4.7.2),
    /// bounded by `GATTServerConfiguration.maximumQueuedIndications`.
    public func queuedIndications(connection: UInt16) -> Int { server.queuedIndicationCount(for: connection) }

    /// Whether an indication on `connection` awaits the central's Handle Value Confirmation.
    public func indicationOutstanding(connection: UInt16) -> Bool { server.indicationOutstanding(on: connection) }

    /// Client Characteristic Configuration descriptors the central on `connection` has written
    /// (bounded by the database's CCCDs).
    public func clientConfigurationCount(connection: UInt16) -> Int { server.clientConfigurations(for: connection).count }

    /// Connections the GATT server holds state for: one per link, none left behind by a link's end.
    public var serverConnectionCount: Int { server.connectionCount }
}
