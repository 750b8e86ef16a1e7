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
        /// Its link ended and a later link, to `peer`, has the same handle now (`peer` may be the
        /// connection's own: the same device connected again).
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
        guard link.peer == connection.peer, link.generation == connection.generation else {
            throw StaleConnectionError(connection: connection, reason: .handleReused(by: link.peer))
        }
        return connection.handle
    }

    /// Whether `handle` is still a link to `peer` (always, when `peer` is nil).
    func isLink(_ handle: UInt16, to peer: BluetoothAddress?) -> Bool {
        guard let peer else { return true }
        return shell.links[handle]?.peer == peer
    }

    /// Whether `handle` is still the link `identity` names: same peer, same number (always, when
    /// `identity` is nil).
    func isLink(_ handle: UInt16, _ identity: LinkIdentity?) -> Bool {
        guard let identity else { return true }
        guard let link = shell.links[handle] else { return false }
        return link.peer == identity.peer && link.generation == identity.generation
    }

    /// Whether `connection` is a live link of this host.
    func isLive(_ connection: Connection) -> Bool {
        connection.host === self && isLink(connection.handle, connection.identity)
    }

    /// A `Connection` for the live link `handle` (its number included), or for one that ended with
    /// this host's record of it: the number it had, 0 when the host no longer knows it.
    func connectionValue(handle: UInt16, peer: BluetoothAddress, role: LinkRole) -> Connection {
        let generation = shell.links[handle].map { $0.peer == peer ? $0.generation : 0 }
            ?? shell.endedLinkGenerations[handle].flatMap { $0.peer == peer ? $0.generation : nil } ?? 0
        return Connection(host: self, handle: handle, peer: peer, role: role, generation: generation)
    }
}
