import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import Testing

/// Discover All finds each service's included services (Core Vol 3 Part G §4.5.1), against
/// BluewireGATT's `GATTServer`: a 16-bit included service's UUID comes in the include declaration, a
/// 128-bit one's from a Read of the included service's declaration (§3.2).
@Suite("Host engine: included services in Discover All")
struct CentralEngineIncludesTests {
    @Test("a primary service's includes of a 16-bit and a 128-bit secondary service are discovered with their UUIDs")
    func includesAreDiscovered() throws {
        let long = try #require(BluetoothUUID(parsing: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"))
        var builder = GATTDatabaseBuilder()
        let short = try builder.addService(BluetoothUUID(0xAAA0), kind: .secondary)
        try builder.addCharacteristic(BluetoothUUID(0xAAA1), properties: [.read], permissions: [.read], value: .cached([1]))
        let wide = try builder.addService(long, kind: .secondary)
        try builder.addCharacteristic(BluetoothUUID(0xAAA2), properties: [.read], permissions: [.read], value: .cached([2]))
        try builder.addService(BluetoothUUID(0xFFF0))
        let first = try builder.addIncludedService(short)
        let second = try builder.addIncludedService(wide)
        try builder.addCharacteristic(BluetoothUUID(0xFFF1), properties: [.read], permissions: [.read], value: .cached([3]))
        var (driver, peer) = try CentralEngineLongWriteTests.connected(database: builder.build())

        let discover = driver.perform(.gatt(connection: CentralEngineLongWriteTests.link, .discoverAll))
        let opcodes = CentralEngineLongWriteTests.exchange(&driver, &peer)
        guard case .success(.services(let services))? = driver.result(discover) else {
            Issue.record("discover: \(String(describing: driver.result(discover)))")
            return
        }
        // Discover All finds primary services only; the secondary ones are reached through the includes.
        #expect(services.map(\.service.uuid) == [BluetoothUUID(0xFFF0)])
        #expect(services.first?.includes == [
            GATTIncludedService(declarationHandle: first, serviceHandle: short.startHandle, endHandle: short.startHandle + 2, uuid: BluetoothUUID(0xAAA0)),
            GATTIncludedService(declarationHandle: second, serviceHandle: wide.startHandle, endHandle: wide.startHandle + 2, uuid: long),
        ])
        #expect(services.first?.characteristics.map(\.characteristic.uuid) == [BluetoothUUID(0xFFF1)])
        // Read By Type «Include», then a Read Request of the 128-bit service's declaration.
        #expect(opcodes.contains(0x0A), "the 128-bit UUID was read: \(opcodes)")
    }
}
