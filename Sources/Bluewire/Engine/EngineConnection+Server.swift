import BluewireCore
import BluewireGATT
import BluewireHostEngine

extension EngineConnection {
    /// As GATT server: sends `value` of the characteristic at `valueHandle` in a Handle Value
    /// Notification to this central if it enabled notifications (Core Vol 3 Part G §4.10; the
    /// database's value is updated either way). Done once the PDU is queued on the link.
    /// - Throws: `.unknownConnection`/`.staleConnection` once the link is gone, `.server` for a
    ///   handle the database has not.
    public func notify(_ valueHandle: UInt16, value: [UInt8]) async throws(HostEngineError) {
        _ = try await host.perform(.notify(valueHandle: valueHandle, value: value, connection: handle), on: self).get()
    }

    /// As GATT server: sends a Handle Value Indication to this central if it enabled indications
    /// (Core Vol 3 Part G §4.11) and returns once it confirmed (§3.4.7.2).
    /// - Throws: `.server(.notSupportedByCharacteristic)` when it did not enable them,
    ///   `.indicationQueueFull`, `.unsubscribed` (it unsubscribed while the value waited), `.disconnected`.
    public func indicate(_ valueHandle: UInt16, value: [UInt8]) async throws(HostEngineError) {
        _ = try await host.perform(.indicate(valueHandle: valueHandle, value: value, connection: handle), on: self).get()
    }
}

extension EngineHost {
    /// Every transition of `peer`'s connection state machine from now on (Docs/Design.md), with the
    /// engine following the peer from now on (`.watch`: a scan that finds it fires DeviceFound).
    /// Ends when the host closes.
    public func transitions(of peer: BluetoothAddress) -> AsyncStream<ConnectionTransition> {
        _ = performNow(.watch(peer))
        let events = self.events()
        return AsyncStream { continuation in
            let task = Task {
                for await event in events {
                    if case .stateChanged(let changed, let transition, _) = event, changed == peer { continuation.yield(transition) }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
