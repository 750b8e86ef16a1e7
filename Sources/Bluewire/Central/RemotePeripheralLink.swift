import BluewireCore
import BluewireHostEngine
import BluewireGATT

/// The link a `RemotePeripheral` has now: its connection and GATT client, and the peripheral's
/// characteristics looked up by UUID on this link.
///
/// Handles are only meaningful on the link they were discovered on (a peripheral without a bond may
/// number its attributes differently next time, Core Vol 3 Part G §2.5.2), so a `RemotePeripheral`
/// addresses characteristics by UUID and resolves them again on every new link.
public struct RemotePeripheralLink: Sendable {
    /// The connection.
    public let connection: EngineConnection
    /// Its GATT client (its own per-connection queue, run inside the peripheral's operations).
    public let gatt: EngineGATTClient
    /// Which of the peripheral's links this is: 1 for the first, 2 for the next... A link's identity
    /// across reconnections (a new connection may get the same handle, so `EngineConnection`s compare equal).
    public let number: Int

    init(connection: EngineConnection, gatt: EngineGATTClient, number: Int) {
        self.connection = connection
        self.gatt = gatt
        self.number = number
    }

    /// The characteristic of type `uuid` (in `service`, if given) on this link. The first lookup on a
    /// link discovers the whole database (one `discoverAll` operation); later ones use the cache.
    public func characteristic(
        _ uuid: BluetoothUUID, in service: BluetoothUUID? = nil
    ) async throws(RemotePeripheralError) -> GATTCharacteristic {
        if let found = lookUp(uuid, in: service) { return found }
        _ = try await withGATT { gatt throws(GATTError) in try await gatt.discoverAll() }
        guard let found = lookUp(uuid, in: service) else { throw .characteristicNotFound(uuid, service: service) }
        return found
    }

    /// Runs `body` with this link's GATT client, its failure as a `RemotePeripheralError`: for the
    /// bodies of `RemotePeripheral.operation(...)`, which fail in the peripheral's error type.
    ///
    /// ```swift
    /// peripheral.operation { link throws(RemotePeripheralError) in
    ///     let status = try await link.characteristic(statusUUID)
    ///     return try await link.withGATT { gatt throws(GATTError) in try await gatt.read(status) }
    /// }
    /// ```
    public func withGATT<Result>(
        _ body: (EngineGATTClient) async throws(GATTError) -> Result
    ) async throws(RemotePeripheralError) -> Result {
        do throws(GATTError) {
            return try await body(gatt)
        } catch {
            throw RemotePeripheralError(error)
        }
    }

    private func lookUp(_ uuid: BluetoothUUID, in service: BluetoothUUID?) -> GATTCharacteristic? {
        let cache = gatt.cache
        for candidate in cache.services where service == nil || candidate.uuid == service {
            if let found = cache.characteristics[candidate.handle]?.first(where: { $0.uuid == uuid }) { return found }
        }
        return nil
    }
}
