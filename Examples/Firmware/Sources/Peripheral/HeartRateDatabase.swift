import BluewireCore
import BluewireGATT

/// The peripheral's GATT database: the Heart Rate service (Bluetooth SIG Heart Rate Service 1.0:
/// Heart Rate Measurement 0x2A37, notify only; Body Sensor Location 0x2A38, read) and an echo
/// service whose characteristic notifies back whatever a central writes to it.
struct HeartRateDatabase {
    static let heartRateService = BluetoothUUID(0x180D)
    static let measurement = BluetoothUUID(0x2A37)
    static let bodySensorLocation = BluetoothUUID(0x2A38)
    /// Custom 128-bit UUIDs: b1e00001-… (service) and b1e00002-… (echo characteristic).
    static let echoService = BluetoothUUID(high: 0xB1E0_0001_0000_4000, low: 0x8000_B1E7_0000_0001)
    static let echo = BluetoothUUID(high: 0xB1E0_0002_0000_4000, low: 0x8000_B1E7_0000_0001)
    /// b1e00003-…: readable only on an encrypted link (Core Vol 3 Part C §10.3.1: Insufficient
    /// Encryption before), value "secret".
    static let secret = BluetoothUUID(high: 0xB1E0_0003_0000_4000, low: 0x8000_B1E7_0000_0001)

    var database: GATTDatabase
    var measurementHandle: UInt16
    var echoHandle: UInt16

    init() throws(GATTDatabaseError) {
        var builder = GATTDatabaseBuilder()
        try builder.addService(Self.heartRateService)
        // Flags 0x00: heart rate as UINT8, no contact/energy/RR fields (HRS §3.1.1.1).
        let measurement = try builder.addCharacteristic(
            Self.measurement, properties: [.notify], permissions: [], value: .cached([0x00, 60]))
        // 0x01: Chest (HRS §3.2.1).
        _ = try builder.addCharacteristic(
            Self.bodySensorLocation, properties: [.read], permissions: [.read], value: .cached([0x01]))
        try builder.addService(Self.echoService)
        let echo = try builder.addCharacteristic(
            Self.echo, properties: [.read, .write, .writeWithoutResponse, .notify], permissions: [.read, .write],
            value: .cached([]))
        _ = try builder.addCharacteristic(
            Self.secret, properties: [.read], permissions: [.readEncrypted], value: .cached([0x73, 0x65, 0x63, 0x72, 0x65, 0x74]))
        database = builder.build()
        measurementHandle = measurement.valueHandle
        echoHandle = echo.valueHandle
    }
}
