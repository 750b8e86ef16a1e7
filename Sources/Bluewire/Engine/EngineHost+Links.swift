import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import BluewireL2CAP

extension EngineHost {
    /// The GATT client session of `connection`: the same one for every call while the link lasts;
    /// for a link that is gone, one that fails every operation with the reason it ended.
    func gattSession(for connection: EngineConnection) -> EngineGATTSession {
        let generation = linkGenerations[connection.handle]
        if staleLinkError(connection) == nil, let generation {
            if let record = linkRecords.sessions[connection.handle], record.generation == generation { return record.session }
            let session = EngineGATTSession(connection: connection)
            linkRecords.sessions[connection.handle] = (generation, session)
            return session
        }
        let session = EngineGATTSession(connection: connection)
        session.linkEnded(linkRecords.endedReason(generation: connection.generation) ?? .unknownConnectionIdentifier)
        return session
    }

    /// Registers a subscription's sink before its CCCD is written; nil when the link is gone.
    func registerSubscription(
        on connection: EngineConnection, valueHandle: UInt16, handler: (@Sendable (GATTNotification) -> Void)?
    ) -> (registration: NotificationRegistration, id: UInt64)? {
        guard isOpen, staleLinkError(connection) == nil else { return nil }
        let queue = NotificationQueue()
        let key = EngineLinkRecords.SinkKey(connection: connection.handle, valueHandle: valueHandle)
        let id = linkRecords.addSink(NotificationSink(queue: queue, handler: handler), for: key)
        let registration = NotificationRegistration(queue: queue) { [weak self] in
            guard let self else { return }
            Task { await self.endSubscription(handle: key.connection, valueHandle: valueHandle, id: id) }
        }
        return (registration, id)
    }

    /// Ends a subscription's sink (its sequence finishes).
    func endSubscription(handle: UInt16, valueHandle: UInt16, id: UInt64) {
        linkRecords.removeSink(id, for: EngineLinkRecords.SinkKey(connection: handle, valueHandle: valueHandle))
    }

    /// Waits for `connection`'s link to end and returns the reason (at once for one already gone).
    func disconnection(of connection: EngineConnection) async -> HCIStatus {
        if staleLinkError(connection) != nil || !isOpen {
            return linkRecords.endedReason(generation: connection.generation) ?? .unknownConnectionIdentifier
        }
        let generation = linkGenerations[connection.handle] ?? 0
        return await withUnsafeContinuation { waiter in
            linkRecords.endWaiters[connection.handle, default: []].append((generation, waiter))
        }
    }

    /// Whether `connection`'s link is up.
    func isLive(_ connection: EngineConnection) -> Bool { isOpen && staleLinkError(connection) == nil }
}

extension EngineConnection {
    /// The peer's address as the link came up.
    public var peer: BluetoothAddress { link.peer }

    /// Whether this link is still up (false once it ended, also when a later link has its handle).
    public var isConnected: Bool {
        get async { await host.isLive(self) }
    }

    /// Waits until this link ends and returns the reason the controller reported (Core Vol 4 Part E
    /// §7.7.5); at once for a link already gone.
    public func disconnection() async -> HCIStatus {
        await host.disconnection(of: self)
    }

    /// Disconnects with `reason` (Core Vol 4 Part E §7.1.6) and returns the reason the controller
    /// reported once Disconnection Complete arrived.
    public func disconnect(reason: HCIStatus) async throws(HostEngineError) -> HCIStatus {
        let completion = try await host.perform(.disconnect(handle: link.handle, reason: reason), on: self).get()
        if case .disconnected(let reported) = completion { return reported }
        return reason
    }

    /// The GATT client of this link, run by the engine: the same client for every call while the
    /// link lasts (its queue, cache and subscriptions).
    public var gatt: EngineGATTClient {
        get async { EngineGATTClient(session: await host.gattSession(for: self)) }
    }
}

extension EngineConnection {
    /// Opens an LE Credit Based channel to `psm` on this link (Core Vol 3 Part A §4.22): see
    /// `EngineHost.openChannel(connection:psm:mtu:mps:credits:)`.
    /// - Throws: `.disconnected` once the link is gone (also when a later link has its handle).
    public func openChannel(psm: SPSM, mtu: Int = 512, mps: Int = 247, credits: Int = 16) async throws(L2CAPChannelError) -> L2CAPChannel {
        guard await isConnected else { throw .disconnected(await host.endedReason(of: self)) }
        return try await host.openChannel(connection: handle, psm: psm, mtu: mtu, mps: mps, credits: credits)
    }
}

extension EngineHost {
    func endedReason(of connection: EngineConnection) -> HCIStatus {
        linkRecords.endedReason(generation: connection.generation) ?? .unknownConnectionIdentifier
    }
}
