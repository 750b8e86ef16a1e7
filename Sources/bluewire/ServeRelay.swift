import Bluewire
import BluewireCore
import BluewireGATT

/// The event loop of `serve`: prints each peripheral event and relays writes of notifying or
/// indicating characteristics to their subscribers.
enum ServeRelay {
    static func serve(_ events: AsyncStream<PeripheralEvent>, host: BluetoothHost, output: ServeOutput) async {
        for await event in events {
            output.print(event)
            guard case .write(let write) = event,
                  let characteristic = await host.database.characteristic(valueHandle: write.handle) else { continue }
            // A cached value's write event carries the whole value; a dynamic one's only its part.
            guard write.kind == nil, let value = await host.database[handle: write.handle]?.cachedValue else { continue }
            if characteristic.properties.contains(.notify) {
                _ = try? await host.notify(write.handle, value: value)
            }
            if characteristic.properties.contains(.indicate) {
                // Confirmations arrive through this same loop's host: do not wait for them here.
                Task { _ = try? await host.indicate(write.handle, value: value) }
            }
        }
    }

    /// Stops advertising, disconnects every central and closes the Host; false if the
    /// disconnections did not complete within `timeout` (the Host is closed anyway).
    static func shutDown(_ host: BluetoothHost, within timeout: Duration) async -> Bool {
        try? await host.stopAdvertising()
        let completed = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withTaskGroup(of: Void.self) { disconnections in
                    for connection in await host.connections {
                        disconnections.addTask { try? await connection.disconnect() }
                    }
                }
                return true
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        await host.close()
        return completed
    }
}
