import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI

/// One LE connection of a `Host`, in either role. A value handle: copies refer to the same link,
/// and every method runs on the Host's executor. Once the link is gone, operations fail with
/// `ConnectionError.disconnected`.
public struct Connection: Sendable, Hashable, CustomStringConvertible {
    public let host: BluetoothHost
    /// The HCI connection handle.
    public let handle: UInt16
    /// The peer's address.
    public let peer: BluetoothAddress
    /// The local device's role.
    public let role: LinkRole

    public static func == (lhs: Connection, rhs: Connection) -> Bool {
        lhs.host === rhs.host && lhs.handle == rhs.handle && lhs.peer == rhs.peer
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(host))
        hasher.combine(handle)
    }

    public var description: String { "connection 0x\(hex(handle, width: 4)) to \(peer) (\(role))" }

    /// Sends an ATT request and waits for its response (or Error Response, returned as a PDU). ATT
    /// allows one outstanding request per bearer (Core Vol 3 Part F §3.3.2): later requests wait.
    /// Cancelling the calling task throws `.cancelled` at once; the bearer still waits for the late
    /// response before it sends the next request.
    public func request(_ pdu: ATTPDU) async throws(ConnectionError) -> ATTPDU {
        try await host.attRequest(pdu, on: handle)
    }

    /// Sends an ATT command (Write Command): no response, not held back by an outstanding request.
    public func send(command pdu: ATTPDU) async throws(ConnectionError) {
        try await host.attCommand(pdu, on: handle)
    }

    /// Exchanges ATT MTUs (client side, once per connection) and returns the ATT_MTU now in force.
    @discardableResult
    public func exchangeMTU() async throws(ConnectionError) -> Int {
        try await host.exchangeMTU(on: handle)
    }

    /// The ATT_MTU in force (23 until an exchange).
    public var mtu: Int {
        get async { await host.mtu(on: handle) }
    }

    /// Notifications and indications from the peer's server for `valueHandle` (or every handle when
    /// nil), from this call on, until the link ends. Register before enabling the CCCD so nothing sent
    /// in between is lost: the sequence buffers until it is iterated.
    public func notifications(valueHandle: UInt16? = nil) async -> AsyncStream<GATTNotification> {
        await host.subscribe(on: handle, valueHandle: valueHandle)
    }

    /// Disconnects and waits for Disconnection Complete.
    public func disconnect(reason: HCIStatus = .remoteUserTerminatedConnection) async throws(HostError) {
        try await host.disconnect(handle: handle, reason: reason)
    }

    /// Waits until the link ends and returns the reason (at once if it already has).
    public func disconnection() async -> HCIStatus {
        await host.waitForDisconnection(handle: handle)
    }

    /// Whether the link is still up.
    public var isConnected: Bool {
        get async { await host.isConnected(handle: handle) }
    }

    /// The connection state machine's current state (Connected.Idle etc.); once the link is gone, the
    /// state it was left in (Disconnected.Initial, or Error after a failure). For a connection made with
    /// `connect(to:)` this is the peer's machine (`BluetoothHost.state(of:)`) while the link is up.
    public var state: ConnectionState {
        get async { await host.connectionState(handle: handle) }
    }

    /// Fires a trigger on this connection's state machine (refused triggers throw, naming state and trigger).
    /// Internal: only the host moves the state machine, in step with the link (a caller firing triggers
    /// could put it out of step with what the controller reports).
    @discardableResult
    func fire(_ trigger: ConnectionTrigger) async throws(ConnectionError) -> ConnectionTransition {
        try await host.fire(trigger, on: handle)
    }
}

extension BluetoothHost {
    func attRequest(_ pdu: ATTPDU, on handle: UInt16) async throws(ConnectionError) -> ATTPDU {
        if let engineHost { return try await engineATTRequest(engineHost, pdu, on: handle) }
        guard let link = links[handle] else { throw .disconnected(endedReason(handle)) }
        let id: ATTRequestID
        do throws(ATTBearerError) {
            id = try link.bearer.send(request: pdu, now: now)
        } catch {
            throw .att(error)
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                link.requestWaiters[id] = continuation
                drainBearer(handle: handle)
            }
        } onCancel: {
            Task { await self.abandonRequest(id, on: handle) }
        }
        return try result.get()
    }

    /// The caller of a request stopped waiting: answer it now. The bearer keeps the transaction
    /// open; its late response finds no waiter and is dropped.
    func abandonRequest(_ id: ATTRequestID, on handle: UInt16) {
        links[handle]?.requestWaiters.removeValue(forKey: id)?.resume(returning: .failure(.cancelled))
    }

    func attCommand(_ pdu: ATTPDU, on handle: UInt16) async throws(ConnectionError) {
        if let engineHost { return try await engineATTCommand(engineHost, pdu, on: handle) }
        guard let link = links[handle] else { throw .disconnected(endedReason(handle)) }
        do throws(ATTBearerError) {
            try link.bearer.send(command: pdu)
        } catch {
            throw .att(error)
        }
        drainBearer(handle: handle)
    }

    func exchangeMTU(on handle: UInt16) async throws(ConnectionError) -> Int {
        if let engineHost { return try await engineExchangeMTU(engineHost, on: handle) }
        let response = try await attRequest(.exchangeMTURequest(clientRxMTU: configuration.preferredMTU), on: handle)
        if case .errorResponse(let request, let attHandle, let code) = response {
            throw .attError(code, request: request, handle: attHandle)
        }
        return mtu(on: handle)
    }

    func mtu(on handle: UInt16) -> Int {
        if let engineHost { return engineMTU(engineHost, on: handle) }
        return links[handle]?.bearer.mtu ?? ATTBearer.defaultMTU
    }

    func subscribe(on handle: UInt16, valueHandle: UInt16?) -> AsyncStream<GATTNotification> {
        if engineHost != nil { return engineSubscribe(on: handle, valueHandle: valueHandle) }
        let (stream, continuation) = AsyncStream<GATTNotification>.makeStream(bufferingPolicy: .unbounded)
        guard let link = links[handle] else {
            continuation.finish()
            return stream
        }
        let id = nextObserverID
        nextObserverID += 1
        if let valueHandle {
            link.notificationSubscribers[valueHandle, default: [:]][id] = continuation
        } else {
            link.allNotificationSubscribers[id] = continuation
        }
        continuation.onTermination = { _ in Task { await self.unsubscribe(handle, valueHandle, id) } }
        return stream
    }

    func unsubscribe(_ handle: UInt16, _ valueHandle: UInt16?, _ id: UInt64) {
        guard let link = links[handle] else { return }
        if let valueHandle {
            link.notificationSubscribers[valueHandle]?[id] = nil
        } else {
            link.allNotificationSubscribers[id] = nil
        }
    }

    func waitForDisconnection(handle: UInt16) async -> HCIStatus {
        if engineHost != nil { return await engineWaitForDisconnection(handle: handle) }
        guard let link = links[handle] else { return endedReason(handle) }
        return await withCheckedContinuation { continuation in link.disconnectWaiters.append(continuation) }
    }

    /// Why the link of `handle` ended, or Unknown Connection Identifier if there never was one.
    func endedReason(_ handle: UInt16) -> HCIStatus {
        endedLinks[handle] ?? .unknownConnectionIdentifier
    }

    func isConnected(handle: UInt16) -> Bool { engineHost == nil ? links[handle] != nil : shell.links[handle] != nil }

    func connectionState(handle: UInt16) -> ConnectionState {
        if let engineHost { return engineConnectionState(engineHost, handle: handle) }
        return links[handle]?.peerState.state ?? endedLinkStates[handle] ?? .initial
    }

    func fire(_ trigger: ConnectionTrigger, on handle: UInt16) throws(ConnectionError) -> ConnectionTransition {
        guard let link = links[handle] else { throw .disconnected(endedReason(handle)) }
        do throws(ConnectionTriggerRefused) {
            return try link.peerState.fire(trigger)
        } catch {
            throw .refused(error)
        }
    }
}
