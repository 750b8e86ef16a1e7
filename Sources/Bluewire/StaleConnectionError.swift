import BluewireCore
import BluewireHCI

/// A `Connection` given to a host operation does not name one of that host's live links.
///
/// A connection handle names a link only while it lasts: once the link ends, the controller may give
/// the same handle to a later link (Core Vol 4 Part E §7.7.65.1, Connection_Handle; §7.7.5,
/// Disconnection Complete). A `Connection` therefore also carries its peer, and the host refuses
/// one whose link is gone instead of acting on whatever link has the handle now.
public struct StaleConnectionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Why the connection is not a live link of the host.
    public enum Reason: Sendable, Hashable {
        /// The connection is another host's.
        case otherHost
        /// Its link ended (the reason the controller reported; Unknown Connection Identifier when
        /// the host never had a link with that handle) and no link has the handle now.
        case ended(HCIStatus)
        /// Its link ended and a later link, to `peer`, has the same handle now.
        case handleReused(by: BluetoothAddress)
    }

    /// The connection that was refused.
    public var connection: Connection
    public var reason: Reason

    public init(connection: Connection, reason: Reason) {
        self.connection = connection
        self.reason = reason
    }

    public var description: String {
        switch reason {
        case .otherHost: "\(connection) belongs to another host"
        case .ended(let status): "\(connection) has ended (\(status))"
        case .handleReused(let peer): "\(connection) has ended; its handle now names a link to \(peer)"
        }
    }
}

extension BluetoothHost {
    /// The handle of `connection` if it is a live link of this host: the same host, and the link
    /// that has its handle now is to its peer.
    func liveHandle(of connection: Connection) throws(StaleConnectionError) -> UInt16 {
        guard connection.host === self else { throw StaleConnectionError(connection: connection, reason: .otherHost) }
        guard let link = shell.links[connection.handle] else {
            throw StaleConnectionError(connection: connection, reason: .ended(endedReason(connection.handle)))
        }
        guard link.peer == connection.peer else {
            throw StaleConnectionError(connection: connection, reason: .handleReused(by: link.peer))
        }
        return connection.handle
    }

    /// Whether `handle` is still the link to `peer` (always, when `peer` is nil).
    func isLink(_ handle: UInt16, to peer: BluetoothAddress?) -> Bool {
        guard let peer else { return true }
        return shell.links[handle]?.peer == peer
    }
}
