import Bluewire

/// The peripheral to connect to: `address` if given (random static, as Bluewire's examples
/// advertise with), else the first device found advertising `service` within `timeout`.
public func findPeripheral(
    on host: BluetoothHost, address: String?, service: BluetoothUUID, timeout: TimeSpan = .seconds(10)
) async -> BluetoothAddress {
    if let address {
        guard let parsed = BluetoothAddress(parsing: address) else { exitWithError("invalid address \(address)") }
        return address.contains("/") ? parsed : BluetoothAddress(value: parsed.value, type: .random)
    }
    do {
        for try await device in await host.scan(filter: AdvertisingFilter(serviceUUIDs: [service]), duration: timeout) {
            await host.stopScan()
            return device.address
        }
    } catch {
        exitWithError("scanning failed: \(error)")
    }
    exitWithError("no device advertising \(service) found")
}

/// The first device advertising the chat room's service within `window`, or nil when none is
/// (chat-central then hosts the room itself). A scan failure ends the program.
public func scanForRoom(on host: BluetoothHost, within window: TimeSpan) async -> BluetoothAddress? {
    do {
        for try await device in await host.scan(filter: AdvertisingFilter(serviceUUIDs: [ChatRoomProfile.service]), duration: window) {
            await host.stopScan()
            return device.address
        }
    } catch {
        exitWithError("scanning failed: \(error)")
    }
    return nil
}
