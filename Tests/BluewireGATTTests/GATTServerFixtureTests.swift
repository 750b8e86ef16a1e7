import BluewireATT
import BluewireCore
import Synchronization
import Testing
@testable import BluewireGATT

/// Records what dynamic handlers were called with (handlers are `@Sendable`, so behind a mutex).
final class HandlerLog: Sendable {
    let writes = Mutex<[GATTWriteRequest]>([])
    let reads = Mutex<[GATTReadRequest]>([])
}

/// A realistic server database:
///
/// ```
/// 0x0001 Primary Service 0x1800            0x0002 Char (read) → 0x0003 Device Name "Bluewire"
///                                          0x0004 Char (read) → 0x0005 Appearance 0x0341
/// 0x0006 Primary Service 0x1801            0x0007 Char (indicate) → 0x0008 Service Changed, 0x0009 CCCD
/// 0x000A Primary Service 0x180F            0x000B Char (read, notify) → 0x000C Battery Level 100,
///                                          0x000D CCCD, 0x000E User Description "Battery"
/// 0x000F Primary Service (128-bit)         0x0010 Char (read, write, write w/o rsp, notify, indicate)
///                                          → 0x0011 300-byte value (byte i = i & 0xFF), 0x0012 CCCD
///                                          0x0013 Char → 0x0014 read_encrypted / write_encrypted [0xE0]
///                                          0x0015 Char → 0x0016 read_authenticated / write_authenticated [0xA0]
///                                          0x0017 Char (write) → 0x0018 write only [0x00]
///                                          0x0019 Char → 0x001A dynamic (read and write handlers)
///                                          0x001B Char → 0x001C dynamic with no handlers
/// 0x001D Secondary Service 0x180A          0x001E Char (read) → 0x001F "Model"
/// ```
struct ServerFixture {
    static let customService = BluetoothUUID(high: 0x6E40_0001_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    static let longCharacteristic = BluetoothUUID(high: 0x6E40_0002_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    static let longValue: [UInt8] = (0..<300).map { UInt8(truncatingIfNeeded: $0) }

    let log = HandlerLog()
    var database: GATTDatabase

    init() throws {
        var b = GATTDatabaseBuilder()
        try b.addService(.genericAccess)
        try b.addCharacteristic(.deviceName, properties: [.read], permissions: [.read], value: .cached(Array("Bluewire".utf8)))
        try b.addCharacteristic(.appearance, properties: [.read], permissions: [.read], value: .cached([0x41, 0x03]))
        try b.addService(.genericAttribute)
        try b.addCharacteristic(.serviceChanged, properties: [.indicate], permissions: [], value: .cached([]))
        try b.addService(BluetoothUUID(0x180F))
        try b.addCharacteristic(BluetoothUUID(0x2A19), properties: [.read, .notify], permissions: [.read], value: .cached([100]))
        try b.addDescriptor(.characteristicUserDescription, permissions: [.read], value: .cached(Array("Battery".utf8)))
        try b.addService(ServerFixture.customService)
        try b.addCharacteristic(
            ServerFixture.longCharacteristic, properties: [.read, .write, .writeWithoutResponse, .notify, .indicate],
            permissions: [.read, .write], value: .cached(ServerFixture.longValue))
        try b.addCharacteristic(BluetoothUUID(0xFF01), properties: [.read, .write],
                                permissions: [.readEncrypted, .writeEncrypted], value: .cached([0xE0]))
        try b.addCharacteristic(BluetoothUUID(0xFF02), properties: [.read, .write],
                                permissions: [.readAuthenticated, .writeAuthenticated], value: .cached([0xA0]))
        try b.addCharacteristic(BluetoothUUID(0xFF03), properties: [.write], permissions: [.write], value: .cached([0x00]))
        let log = self.log
        try b.addCharacteristic(
            BluetoothUUID(0xFF04), properties: [.read, .write], permissions: [.read, .write],
            value: .dynamic(GATTDynamicValue(
                read: { request throws(GATTAttributeError) in
                    log.reads.withLock { $0.append(request) }
                    // The value is "D" + the connection handle's low byte, repeated to 40 bytes.
                    let whole = [UInt8(ascii: "D")] + Array(repeating: UInt8(truncatingIfNeeded: request.connection), count: 39)
                    return try request.part(of: whole)
                },
                write: { request throws(GATTAttributeError) in
                    if request.value.first == 0xEE { throw GATTAttributeError(.applicationError(0x01)) }
                    log.writes.withLock { $0.append(request) }
                })))
        try b.addCharacteristic(BluetoothUUID(0xFF05), properties: [.read, .write], permissions: [.read, .write],
                                value: .dynamic(GATTDynamicValue()))
        try b.addService(BluetoothUUID(0x180A), kind: .secondary)
        try b.addCharacteristic(BluetoothUUID(0x2A24), properties: [.read], permissions: [.read], value: .cached(Array("Model".utf8)))
        database = b.build()
    }

    func server(_ configuration: GATTServerConfiguration = GATTServerConfiguration()) -> GATTServer {
        var server = GATTServer(database: database, configuration: configuration)
        server.connect(0x0040)
        return server
    }
}

/// The connection most tests use.
let conn: UInt16 = 0x0040

extension GATTServer {
    /// Sends `request` and returns the response, for byte-vector exchanges.
    mutating func exchange(_ request: [UInt8], _ connection: UInt16 = conn) -> [UInt8]? {
        handle(request, from: connection)
    }
}

@Suite struct GATTServerFixtureTests {
    @Test func fixtureLayoutMatchesItsDocumentation() throws {
        let database = try ServerFixture().database
        #expect(database.attributes.count == 31)
        #expect(database.attributes.map(\.handle) == Array(1...31))
        #expect(database.characteristic(valueHandle: 0x000C)?.clientConfigurationHandle == 0x000D)
        #expect(database.characteristic(valueHandle: 0x0011)?.clientConfigurationHandle == 0x0012)
        #expect(database.characteristic(valueHandle: 0x0008)?.clientConfigurationHandle == 0x0009)
        #expect(database[handle: 0x001A]?.cachedValue == nil)
        #expect(database[handle: 0x001D]?.type == .secondaryService)
        #expect(database[handle: 0x001F]?.cachedValue == Array("Model".utf8))
    }
}
