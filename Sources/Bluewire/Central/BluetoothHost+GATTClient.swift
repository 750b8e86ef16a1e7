import BluewireCore
import BluewireGATT
import BluewireHCI

extension BluetoothHost {
    /// Gives a new link its GATT client: an operation queue of its own and a session that sees every
    /// transition of the link's state machine.
    func attachGATTClient(to link: Link, connection: Connection) {
        let session = GATTClientSession(connection: connection, state: link.peerState.state)
        link.gattClient = session
        lifetimes.track(link, session: session)
        link.peerState.linkObserver = { [weak session] transition in session?.record(transition) }
    }

    /// The GATT client session of `connection`; for a link that is already gone, a session that fails
    /// every operation with the reason (or Unknown Connection Identifier when none is known).
    func gattClientSession(for connection: Connection) -> GATTClientSession {
        if engineHost != nil { return engineGATTClientSession(for: connection) }
        if let link = links[connection.handle], link.peer == connection.peer, let session = link.gattClient {
            return session
        }
        let session = GATTClientSession(connection: connection, state: .initial)
        session.recordDisconnection(reason: .unknownConnectionIdentifier)
        session.linkDisconnected()
        return session
    }

    /// Fires `trigger` on the link's state machine for a GATT operation (`cause`: what failed, for
    /// `Failure`).
    /// - Throws: `.refused` naming state and trigger, or `.disconnected` when the link is gone.
    func fireGATTTrigger(_ trigger: ConnectionTrigger, on connection: Connection, cause: ConnectionFailureCause? = nil) throws(GATTError) {
        if let engineHost { return try engineFireGATTTrigger(engineHost, trigger, on: connection, cause: cause) }
        guard let link = links[connection.handle], link.peer == connection.peer else {
            throw .disconnected(endedReason(connection.handle))
        }
        do throws(ConnectionTriggerRefused) {
            try link.peerState.fire(trigger, cause: cause)
        } catch {
            throw .refused(error)
        }
    }

    /// Fires `EnableNotifications` after a subscription's CCCD write, `DisableNotifications` after the
    /// last unsubscription's, except when the model is already there: a second subscription while
    /// notifications are enabled changes nothing (the table refuses EnableNotifications in
    /// NotificationsEnabled because there is nothing to change, not because it is wrong). Any other
    /// refusal is thrown: the model is out of step with what the client did.
    func fireSubscriptionTrigger(_ trigger: ConnectionTrigger, on connection: Connection) throws(GATTError) {
        // On the engine backend the engine's `.subscribe`/`.unsubscribe` fire these themselves.
        if engineHost != nil { return }
        guard let link = links[connection.handle], link.peer == connection.peer else {
            throw .disconnected(endedReason(connection.handle))
        }
        let already: ConnectionState = trigger == .enableNotifications ? .connected(.notificationsEnabled) : .connected(.discoveredCharacteristic)
        guard link.peerState.state != already else { return }
        try fireGATTTrigger(trigger, on: connection)
    }

    // MARK: Notification registrations

    /// Registers a queue for notifications and indications of `valueHandle`, effective at once (so
    /// a caller that registers before writing the CCCD misses nothing). The registration ends with
    /// `endNotifications`, when the link ends, or when the last reference to it goes. Nil if the
    /// link is gone.
    func registerNotifications(
        on connection: Connection, valueHandle: UInt16, handler: (@Sendable (GATTNotification) -> Void)? = nil
    ) -> (registration: NotificationRegistration, id: UInt64)? {
        if engineHost != nil { return engineRegisterNotifications(on: connection, valueHandle: valueHandle, handler: handler) }
        guard let link = links[connection.handle], link.peer == connection.peer else { return nil }
        let queue = NotificationQueue()
        let id = nextObserverID
        nextObserverID += 1
        link.notificationSinks[valueHandle, default: [:]][id] = NotificationSink(queue: queue, handler: handler)
        let handle = connection.handle
        let registration = NotificationRegistration(queue: queue) { [weak self] in
            guard let self else { return }
            Task { await self.endNotifications(handle: handle, valueHandle: valueHandle, id: id) }
        }
        return (registration, id)
    }

    /// Ends a registration: its subscriber gets what is buffered, then the end.
    func endNotifications(handle: UInt16, valueHandle: UInt16, id: UInt64) {
        if engineHost != nil { return engineEndNotifications(handle: handle, valueHandle: valueHandle, id: id) }
        guard let link = links[handle] else { return }
        link.notificationSinks[valueHandle]?.removeValue(forKey: id)?.queue.finish()
        if link.notificationSinks[valueHandle]?.isEmpty == true { link.notificationSinks[valueHandle] = nil }
    }

    // MARK: Link setup

    /// LE Set Default PHY (Core Vol 4 Part E §7.8.48): prefer LE 2M as well as 1M in both directions
    /// for new connections, so the controllers move to 2M on their own where both support it. A
    /// refusal keeps 1M.
    func preferPHYsForNewConnections(_ controller: ControllerInfo) async {
        guard controller.supports2MPHY else { return }
        let command = HCICommand.leSetDefaultPHY(LESetDefaultPHY(allPHYs: 0, txPHYs: [.le1M, .le2M], rxPHYs: [.le1M, .le2M]))
        if case .failure(let error) = await sendCommandResult(command) {
            log.hci.debug("LE Set Default PHY refused, staying on 1M: \(error)")
        }
    }

    /// Asks for the longest LE data packets (LE Set Data Length, §7.8.33: 251 octets) when the
    /// controller has Data Packet Length Extension. Some controllers refuse (bumble answers Command
    /// Complete with a bare Unknown HCI Command status); the link then keeps 27-octet packets.
    func prepareCentralLink(_ handle: UInt16, _ controller: ControllerInfo) async {
        guard controller.supportsDataLengthExtension, links[handle] != nil else { return }
        let command = HCICommand.leSetDataLength(LESetDataLength(connectionHandle: handle))
        if case .failure(let error) = await sendCommandResult(command) {
            log.hci.debug("LE Set Data Length refused, keeping 27-octet packets: \(error)")
        }
    }
}
