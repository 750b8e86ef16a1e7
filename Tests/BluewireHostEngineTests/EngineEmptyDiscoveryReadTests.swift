import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHostEngine
import BluewireTesting
import Testing

/// A discovery that found no service still discovered the database (an empty one): the peer's state
/// machine ends in DiscoveredCharacteristic, so a read by a handle the application knows goes out as
/// a Read Request (Core Vol 3 Part G §4.8.1) and the server's answer decides, instead of a refusal
/// in Connected.Idle. Two engines on the virtual link, the peripheral with an empty database.
@Suite("Host engine: a read after a discovery that found nothing")
struct EngineEmptyDiscoveryReadTests {
    @Test("gatt read 0x0003 after an empty discovery sends the Read Request and reports the server's Invalid Handle")
    func readAfterEmptyDiscoveryIsSent() throws {
        var scene = try EnginesOnVirtualLink(timing: .immediate)
        scene.peripheral.engine.setDatabase(GATTDatabase())
        let handle = try scene.connect()
        let services = try scene.discover(handle)
        #expect(services.isEmpty)
        #expect(scene.central.engine.state(of: EnginesOnVirtualLink.peripheralAddress) == .connected(.discoveredCharacteristic))
        let read = scene.perform(.gatt(connection: handle, .read(handle: 0x0003)), on: 0)
        try scene.run(until: { $0.central.result(read) != nil }, within: .seconds(5))
        #expect(scene.central.result(read) == .failure(.gatt(.errorResponse(.invalidHandle, requestOpcode: .readRequest, handle: 0x0003))))
        #expect(scene.central.engine.state(of: EnginesOnVirtualLink.peripheralAddress) == .connected(.discoveredCharacteristic))
    }
}
