import BluewireCore
import BluewireGATT

/// The database of the Connection-value tests (virtual link and bumble centrals): service 0xFFC0 with
/// one characteristic that notifies (0xFFC1) and one that indicates (0xFFC2).
public struct ConnectionValueDatabase: Sendable {
    public static let service = BluetoothUUID(0xFFC0)

    public var database: GATTDatabase
    public var notifying: UInt16
    public var indicating: UInt16

    public init() throws {
        var builder = GATTDatabaseBuilder()
        try builder.addService(Self.service)
        notifying = try builder.addCharacteristic(BluetoothUUID(0xFFC1), properties: [.notify], permissions: [], value: .cached([])).valueHandle
        indicating = try builder.addCharacteristic(BluetoothUUID(0xFFC2), properties: [.indicate], permissions: [], value: .cached([])).valueHandle
        database = builder.build()
    }
}
