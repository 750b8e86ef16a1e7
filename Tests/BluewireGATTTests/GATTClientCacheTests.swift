import BluewireCore
import BluewireGATT
import Testing

@Suite("GATT client: discovery cache and Service Changed")
struct GATTClientCacheTests {
    private func populated() -> GATTClientCache {
        var cache = GATTClientCache()
        let gap = GATTService(handle: 0x0001, endHandle: 0x0005, uuid: .genericAccess)
        let gatt = GATTService(handle: 0x0006, endHandle: 0x0009, uuid: .genericAttribute)
        let uart = GATTService(handle: 0x000A, endHandle: 0x0020, uuid: nordicUART)
        cache.insert(services: [uart, gap, gatt])
        let changed = GATTCharacteristic(handle: 7, valueHandle: 8, properties: [.indicate], uuid: .serviceChanged, endHandle: 9)
        cache.insert(characteristics: [changed], of: gatt)
        cache.insert(descriptors: [GATTDescriptor(handle: 9, uuid: .clientCharacteristicConfiguration)], of: changed)
        let rx = GATTCharacteristic(handle: 0x0B, valueHandle: 0x0C, properties: [.notify], uuid: nordicUART, endHandle: 0x0D)
        cache.insert(characteristics: [rx], of: uart)
        cache.insert(descriptors: [GATTDescriptor(handle: 0x0D, uuid: .clientCharacteristicConfiguration)], of: rx)
        return cache
    }

    @Test("The cache keeps services in handle order and finds the Service Changed characteristic")
    func cacheLookups() {
        let cache = populated()
        #expect(cache.services.map(\.handle) == [0x0001, 0x0006, 0x000A])
        #expect(cache.serviceChangedValueHandle == 8)
        #expect(cache.service(containing: 0x0C)?.uuid == nordicUART)
        #expect(cache.characteristics(withUUID: nordicUART).map(\.valueHandle) == [0x0C])
    }

    @Test("A Service Changed indication drops every overlapping service whole and widens the range to rediscover")
    func serviceChangedInvalidatesOverlappingServices() throws {
        var cache = populated()
        // Affected range 0x0010-0x0030: overlaps only the UART service (0x000A-0x0020).
        let rediscover = try cache.handleServiceChanged(bytes("1000 3000")[...])
        #expect(rediscover == 0x000A...0x0030)
        #expect(cache.services.map(\.handle) == [0x0001, 0x0006])
        #expect(cache.characteristics[0x000A] == nil)
        #expect(cache.descriptors[0x0B] == nil, "descriptors of dropped characteristics go too")
        #expect(cache.descriptors[0x07] != nil, "services outside the range keep their descriptors")
    }

    @Test("A Service Changed value that is not two ordered handles is a decode error")
    func serviceChangedValueValidated() {
        var cache = populated()
        #expect(throws: DecodeError.self) { try cache.handleServiceChanged(bytes("1000")[...]) }
        #expect(throws: DecodeError.self) { try cache.handleServiceChanged(bytes("3000 1000")[...]) }
        #expect(cache.services.count == 3, "a bad indication invalidates nothing")
    }

    @Test("Invalidating the whole handle space empties the cache")
    func invalidateEverything() {
        var cache = populated()
        #expect(cache.invalidate(0x0001...0xFFFF) == 0x0001...0xFFFF)
        #expect(cache.services.isEmpty && cache.characteristics.isEmpty && cache.descriptors.isEmpty)
    }

    @Test("Re-inserting a service whose range changed forgets its old characteristics")
    func reinsertChangedService() {
        var cache = populated()
        cache.insert(services: [GATTService(handle: 0x000A, endHandle: 0x0030, uuid: nordicUART)])
        #expect(cache.characteristics[0x000A] == nil)
        #expect(cache.services.count == 3)
    }
}
