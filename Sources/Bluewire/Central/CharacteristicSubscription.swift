import BluewireGATT

/// The notifications (or indications) of one characteristic, as an `AsyncSequence`, from the moment
/// its Client Characteristic Configuration descriptor was written.
///
/// The sequence was registered with the Host before the CCCD write went out, and buffers without
/// bound until iterated, so nothing the server sends between its Write Response and the consumer's
/// first `next()` is lost. Values are in the order the link delivered them. Indications have already
/// been confirmed (Core Vol 3 Part F §3.4.7.2).
///
/// The sequence ends normally after `GATTClient.unsubscribe(_:)` (or when the iterating task is
/// cancelled), and throws `GATTError.disconnected(reason)` when the link drops. Once every copy of
/// the subscription and its iterators is gone, the Host stops buffering for it; the server keeps
/// sending until `unsubscribe` writes the CCCD.
public struct CharacteristicSubscription: AsyncSequence, Sendable {
    public typealias Element = GATTNotification
    public typealias Failure = GATTError

    /// The subscribed characteristic.
    public let characteristic: GATTCharacteristic
    /// Its Client Characteristic Configuration descriptor.
    public let descriptorHandle: UInt16
    /// Whether indications (rather than notifications) were enabled.
    public let indications: Bool
    let id: UInt64
    let registration: NotificationRegistration
    let session: any LinkEndRecord

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(registration: registration, session: session)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let registration: NotificationRegistration
        let session: any LinkEndRecord

        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws(GATTError) -> GATTNotification? {
            if let notification = await registration.queue.next(isolation: actor) { return notification }
            if Task.isCancelled { return nil }
            if let reason = session.disconnection { throw .disconnected(reason) }
            return nil
        }

        public mutating func next() async throws(GATTError) -> GATTNotification? {
            try await next(isolation: nil)
        }
    }
}

extension GATTClient {
    /// Enables notifications (or, with `indications: true`, indications) of a discovered
    /// characteristic (Core Vol 3 Part G §4.10, §4.11) and returns them as a sequence.
    ///
    /// One operation on the queue: the sequence is registered first, then the CCCD is written (found
    /// with Find Information if its handle is not cached yet). The state machine sees `Write`,
    /// `OperationCompleted`, then `EnableNotifications` if no other subscription was active.
    /// - Throws: `.procedure(.propertyNotSupported)` when the characteristic cannot notify/indicate,
    ///   `.notDiscovered`, `.refused`, `.disconnected`, or the server's Error Response.
    public func subscribe(to characteristic: GATTCharacteristic, indications: Bool = false) async throws(GATTError) -> CharacteristicSubscription {
        try await subscribe(to: characteristic, indications: indications, handler: nil)
    }

    /// Subscribes like `subscribe(to:indications:)`, but hands each notification (or confirmed
    /// indication) to `handler` synchronously, on the host's executor, as the packet is processed:
    /// no queue and no task switch per value, for high-rate streams (sensor data, throughput).
    /// `handler` must return quickly and never block: the host handles nothing else meanwhile.
    ///
    /// The returned subscription's sequence yields no values: it ends after `unsubscribe(_:)` and
    /// throws `GATTError.disconnected(reason)` when the link drops, so iterating it waits for the
    /// end. Keep it (or an iterator) alive as long as values should arrive: when the last copy is
    /// gone the host stops calling `handler`.
    public func subscribe(
        to characteristic: GATTCharacteristic, indications: Bool = false,
        onNotification handler: @escaping @Sendable (GATTNotification) -> Void
    ) async throws(GATTError) -> CharacteristicSubscription {
        try await subscribe(to: characteristic, indications: indications, handler: .some(handler))
    }

    func subscribe(
        to characteristic: GATTCharacteristic, indications: Bool,
        handler: (@Sendable (GATTNotification) -> Void)?
    ) async throws(GATTError) -> CharacteristicSubscription {
        try await operation { _ throws(GATTError) in
            try self.requireDiscovered(characteristic)
            let known = self.session.cache.clientConfigurationHandle(of: characteristic)
            return try await self.engineSubscribe(to: characteristic, indications: indications, descriptorHandle: known, handler: handler)
        }
    }

    /// Disables the subscription: writes 0x0000 to the CCCD (unless another subscription of this
    /// client still uses the characteristic), then ends its sequence. The last one fires
    /// `DisableNotifications`.
    public func unsubscribe(_ subscription: CharacteristicSubscription) async throws(GATTError) {
        try await operation { _ throws(GATTError) in
            let host = self.connection.host, connection = self.connection
            let characteristic = subscription.characteristic
            let othersOnCharacteristic = self.session.withState { state in
                state.subscriptions.contains { $0.key != subscription.id && $0.value.characteristic.valueHandle == characteristic.valueHandle }
            }
            if !othersOnCharacteristic {
                // The engine's `.unsubscribe` writes the CCCD and fires Write, OperationCompleted
                // and, for the last subscription, DisableNotifications.
                _ = try await host.engineConfigure(
                    .unsubscribe(characteristic, descriptorHandle: subscription.descriptorHandle), on: connection)
            }
            self.session.withState { state in state.subscriptions[subscription.id] = nil }
            await host.endNotifications(handle: connection.handle, valueHandle: characteristic.valueHandle, id: subscription.id)
        }
    }
}

extension GATTClient {
    /// `subscribe` through the engine: the registration first, then the engine's `.subscribe`,
    /// which writes the CCCD (finding it with Find Information if its handle is not cached) and fires
    /// Write, OperationCompleted and, for the first subscription, EnableNotifications.
    func engineSubscribe(
        to characteristic: GATTCharacteristic, indications: Bool, descriptorHandle known: UInt16?,
        handler: (@Sendable (GATTNotification) -> Void)?
    ) async throws(GATTError) -> CharacteristicSubscription {
        if let reason = session.disconnection { throw .disconnected(reason) }
        let host = connection.host, connection = self.connection
        guard let registration = await host.registerNotifications(on: connection, valueHandle: characteristic.valueHandle, handler: handler) else {
            throw .disconnected(session.disconnection ?? .unknownConnectionIdentifier)
        }
        let descriptorHandle: UInt16
        do {
            descriptorHandle = try await host.engineConfigure(
                .subscribe(characteristic, indications: indications, descriptorHandle: known), on: connection)
        } catch {
            await host.endNotifications(handle: connection.handle, valueHandle: characteristic.valueHandle, id: registration.id)
            throw error
        }
        session.withState { state in
            state.subscriptions[registration.id] = .init(characteristic: characteristic, descriptorHandle: descriptorHandle)
        }
        return CharacteristicSubscription(
            characteristic: characteristic, descriptorHandle: descriptorHandle, indications: indications,
            id: registration.id, registration: registration.registration, session: session)
    }
}
