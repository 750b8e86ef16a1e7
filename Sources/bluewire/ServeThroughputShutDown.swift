import Bluewire
import BluewireCore
import BluewireGATT

/// How `serve --throughput` (ATT mode, on `BluetoothHost`) ends.
enum ServeThroughputShutDown {
    /// Stops advertising, disconnects every central and closes the Host; false if the
    /// disconnections did not complete within `timeout` (the Host is closed anyway).
    static func shutDown(_ host: BluetoothHost, within timeout: Duration) async -> Bool {
        try? await host.stopAdvertising()
        let completed = await finishes(within: timeout) {
            await withTaskGroup(of: Void.self) { disconnections in
                for connection in await host.connections {
                    disconnections.addTask { try? await connection.disconnect() }
                }
            }
        }
        await host.close()
        return completed
    }
}
