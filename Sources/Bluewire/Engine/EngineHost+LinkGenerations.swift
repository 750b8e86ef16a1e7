import BluewireCore
import BluewireHostEngine
import BluewireSMP

/// Which link an `EngineConnection` was made for. A connection handle names a link only while it
/// lasts: once Disconnection Complete frees it, the controller may give it to the next link (Core
/// Vol 4 Part E §7.7.5, §7.7.65.1). So the host numbers the links as they come up, and an
/// `EngineConnection` keeps the number (generation) of its link beside its handle and peer; a call
/// on it is refused when the link under the handle now is another one.
extension EngineHost {
    func linkCameUp(_ handle: UInt16) {
        linkGenerations[handle] = nextLinkGeneration
        nextLinkGeneration &+= 1
    }

    /// The generation of `link` if it is the link up now under its handle (same peer and role), else
    /// 0, which no link has: an `EngineConnection` made for a link already gone refuses every call.
    func generation(of link: HostConnection) -> UInt64 {
        guard let now = engine.connection(link.handle), now.peer == link.peer, now.role == link.role else { return 0 }
        return linkGenerations[link.handle] ?? 0
    }

    /// Why `connection` does not name the link up now under its handle, nil when it does:
    /// `.unknownConnection` when no link has the handle, `.staleConnection` when a later link has it
    /// (another peer or role, or, for a connection that knows its link's generation, a later link of
    /// the same peer).
    func staleLinkError(_ connection: EngineConnection) -> HostEngineError? {
        let link = connection.link
        guard let now = engine.connection(link.handle) else { return .unknownConnection(link.handle) }
        let sameLink = now.peer == link.peer && now.role == link.role
            && (connection.generation.map { linkGenerations[link.handle] == $0 } ?? true)
        return sameLink ? nil : .staleConnection(handle: link.handle, peer: link.peer)
    }

    /// `perform(_:)` if `connection` still names the link it was made for. The check and the hand-off
    /// to the engine run in one turn of the actor, so no other link can come up in between.
    func perform(_ request: HostRequest, on connection: EngineConnection) async -> Result<HostCompletion, HostEngineError> {
        if let error = staleLinkError(connection) { return .failure(error) }
        return await perform(request)
    }

    /// `performCancellable(_:)` if `connection` still names the link it was made for.
    func performCancellable(_ request: HostRequest, on connection: EngineConnection) async -> Result<HostCompletion, HostEngineError> {
        if let error = staleLinkError(connection) { return .failure(error) }
        return await performCancellable(request)
    }

    /// `pair(_:)` on the link `connection` was made for.
    func pair(_ connection: EngineConnection) async throws(HostEngineError) -> LinkSecurityLevel {
        if let error = staleLinkError(connection) { throw error }
        return try await pair(connection.handle)
    }

    /// `encrypt(_:)` on the link `connection` was made for.
    func encrypt(_ connection: EngineConnection) async throws(HostEngineError) -> LinkSecurityLevel {
        if let error = staleLinkError(connection) { throw error }
        return try await encrypt(connection.handle)
    }

    /// The security of the link `connection` was made for; nil once it is gone.
    func security(of connection: EngineConnection) -> (level: LinkSecurityLevel, keySize: UInt8)? {
        staleLinkError(connection) == nil ? security(of: connection.handle) : nil
    }

    /// The pairing method of the link `connection` was made for; nil once it is gone.
    func pairingMethod(of connection: EngineConnection) -> PairingMethod? {
        staleLinkError(connection) == nil ? pairingMethod(of: connection.handle) : nil
    }

    /// The ATT_MTU of the link `connection` was made for; nil once it is gone.
    func mtu(of connection: EngineConnection) -> Int? {
        staleLinkError(connection) == nil ? mtu(of: connection.handle) : nil
    }

    /// Notification values on the link `connection` was made for: a finished stream once it is gone.
    func notificationValues(on connection: EngineConnection, valueHandle: UInt16) -> AsyncStream<ArraySlice<UInt8>> {
        guard staleLinkError(connection) == nil else {
            let (values, continuation) = AsyncStream<ArraySlice<UInt8>>.makeStream()
            continuation.finish()
            return values
        }
        return notificationValues(connection: connection.handle, valueHandle: valueHandle)
    }
}
