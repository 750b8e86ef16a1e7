import BluewireCore
import BluewireGATT

/// Why an engine test could not reach the state its checks need.
public enum EngineTestError: Error { case bringUpFailed }

/// A small database: one service 0xFFF0 with characteristic 0xFFF1 (read, write, notify, indicate)
/// at value handle 3 and its CCCD at 4, and 0xFFF2 (read) with a 100-octet value at handle 6.
public enum TestDatabase {
    public static let service = BluetoothUUID(0xFFF0)
    public static let valueHandle: UInt16 = 3
    public static let cccdHandle: UInt16 = 4
    public static let longHandle: UInt16 = 6
    public static let longValue = (0..<100).map { UInt8($0) }

    public static func make() throws -> GATTDatabase {
        var builder = GATTDatabaseBuilder()
        try builder.addService(service)
        try builder.addCharacteristic(
            BluetoothUUID(0xFFF1), properties: [.read, .write, .notify, .indicate], permissions: [.read, .write],
            value: .cached([0x2A]))
        try builder.addCharacteristic(BluetoothUUID(0xFFF2), properties: [.read], permissions: [.read], value: .cached(longValue))
        return builder.build()
    }
}
