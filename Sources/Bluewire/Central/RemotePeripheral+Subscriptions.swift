import BluewireCore
import BluewireGATT

/// What a `RemotePeripheral` keeps of one subscription between links.
struct RemoteSubscriptionState {
    var uuid: BluetoothUUID
    var service: BluetoothUUID?
    var indications: Bool
    var continuation: AsyncStream<GATTNotification>.Continuation
    /// The subscription on the current link; nil while there is none.
    var active: CharacteristicSubscription?
}

/// Notifications (or indications) of one characteristic of a `RemotePeripheral`, across links: after
/// a reconnection the peripheral enables them again (the Client Characteristic Configuration of a
/// peer without a bond is reset on disconnection, Core Vol 3 Part G §3.3.3.3), and the sequence goes
/// on. It ends after `RemotePeripheral.unsubscribe(_:)`, or when the link drops and the peripheral
/// has no auto-connect. Values sent while there was no link are lost.
public struct RemoteSubscription: Sendable {
    let id: UInt64
    /// The characteristic's UUID.
    public let characteristic: BluetoothUUID
    /// The values, in the order they arrived, buffered until read.
    public let notifications: AsyncStream<GATTNotification>
}

extension RemotePeripheral {
    /// Subscribes on the current link and keeps the subscription for later links (runs inside an operation).
    func addSubscription(
        _ uuid: BluetoothUUID, service: BluetoothUUID?, indications: Bool
    ) async throws(RemotePeripheralError) -> RemoteSubscription {
        let (stream, continuation) = AsyncStream<GATTNotification>.makeStream(bufferingPolicy: .unbounded)
        let id = nextID
        nextID += 1
        subscriptions[id] = RemoteSubscriptionState(
            uuid: uuid, service: service, indications: indications, continuation: continuation)
        guard let link = slot.link else {
            subscriptions[id] = nil
            throw .notConnected
        }
        do {
            try await activate(id, on: link)
        } catch {
            subscriptions[id] = nil
            throw error
        }
        return RemoteSubscription(id: id, characteristic: uuid, notifications: stream)
    }

    /// Disables the subscription on the current link (if there is one) and ends its sequence.
    func removeSubscription(_ id: UInt64) async throws(RemotePeripheralError) {
        guard let state = subscriptions.removeValue(forKey: id) else { return }
        defer { state.continuation.finish() }
        guard let active = state.active, let link = slot.link else { return }
        do {
            try await link.gatt.unsubscribe(active)
        } catch where !error.isDisconnection {
            throw RemotePeripheralError(error)
        } catch {
            // The link went: nothing left to disable.
        }
    }

    /// Enables every wanted subscription on a new link.
    func resubscribe(on link: RemotePeripheralLink) async throws(RemotePeripheralError) {
        let ids = subscriptions.keys.sorted()
        guard !ids.isEmpty else { return }
        for id in ids { try await activate(id, on: link) }
        emit(.resubscribed(count: ids.count))
    }

    private func activate(_ id: UInt64, on link: RemotePeripheralLink) async throws(RemotePeripheralError) {
        guard let state = subscriptions[id] else { return }
        let characteristic = try await link.characteristic(state.uuid, in: state.service)
        let continuation = state.continuation
        let active: CharacteristicSubscription
        do {
            active = try await link.gatt.subscribe(to: characteristic, indications: state.indications) { continuation.yield($0) }
        } catch {
            throw RemotePeripheralError(error)
        }
        subscriptions[id]?.active = active
    }
}
