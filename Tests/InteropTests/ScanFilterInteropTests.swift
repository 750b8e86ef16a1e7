import Bluewire
import BluewireCore
import BluewireHCI
import Testing

extension ScanInteropTests {
    /// One filter criterion, each with a value bumble's advertisement matches and one it does not.
    enum FilterCase: String, CaseIterable, Sendable {
        case service16, service128, namePrefix, address

        func filter(matching: Bool, fixture: ScanAdvertiserFixture, address: BluetoothAddress) -> AdvertisingFilter {
            switch self {
            case .service16:
                return AdvertisingFilter(serviceUUIDs: [BluetoothUUID(matching ? 0x180F : 0x1812)])
            case .service128:
                let uuid = matching ? fixture.uuid128[0] : "6E400001-B5A3-F393-E0A9-E50E24DCCA9F"
                return AdvertisingFilter(serviceUUIDs: [BluetoothUUID(parsing: uuid)!])
            case .namePrefix:
                return AdvertisingFilter(namePrefix: matching ? String(fixture.name.prefix(4)) : fixture.name + "X")
            case .address:
                // Without `/random` a filter address matches either address type (AdvertisingFilter).
                let value = matching ? address.value : address.value ^ 1
                return AdvertisingFilter(addresses: [BluetoothAddress(value: value, type: .public)])
            }
        }
    }

    /// The same host scans twice on one link: first with a filter that bumble's advertisement does
    /// not match (nothing may come out while it advertises), then with one it does.
    @Test("scan filter keeps only matching advertisers", arguments: FilterCase.allCases)
    func filterKeepsOnlyMatchingAdvertisers(_ criterion: FilterCase) async throws {
        let fixture: ScanAdvertiserFixture = criterion == .service128 ? .oneTwentyEightBit : .sixteenBit
        try await withScanningHost(.tcp, advertiser: fixture) { underTest, peer in
            let address = try peer.peripheralAddress
            let excluded = try await underTest.collect(
                filter: criterion.filter(matching: false, fixture: fixture, address: address), duration: .milliseconds(1000))
            #expect(excluded.isEmpty, "\(criterion) filter let through \(excluded.map(\.address))")
            let reportsDuringExcludedScan = underTest.counter.count(0x02) + underTest.counter.count(0x0D)
            #expect(reportsDuringExcludedScan > 0, "bumble advertised nothing during the excluding scan: the test proves nothing")

            let found = try await underTest.find(address, filter: criterion.filter(matching: true, fixture: fixture, address: address))
            let device = try #require(found, "\(criterion) filter dropped the matching advertiser")
            expectAdvertisement(device, matches: fixture)
        }
    }
}
