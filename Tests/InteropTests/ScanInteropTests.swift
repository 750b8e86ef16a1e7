import Bluewire
import BluewireCore
import BluewireHCI
import BluewireTransport
import Foundation
import Testing
import PeerTestSupport

/// Scanning against Google's bumble (PyPI): a bumble Device advertises on one controller of a
/// LocalLink, Bluewire is the host of another, each test on a fresh link (bumble's controller keeps
/// scanning and advertising state across Reset, Docs/Testing.md).
///
/// Serialized: every test runs a Python process and a Swift host; one at a time keeps each well under
/// ten seconds on a two-core machine while the rest of the suite runs in parallel.
@Suite(.serialized) struct ScanInteropTests {
    /// Which advertising report the host-facing controller sends (bumble_link.py `--legacy-reports`).
    enum ReportFormat: String, CaseIterable, Sendable {
        case legacy, extended

        var arguments: [String] { self == .legacy ? ["--legacy-reports"] : [] }
        /// LE Meta subevent code of the reports (Core Vol 4 Part E §7.7.65.2 and §7.7.65.13).
        var subevent: UInt8 { self == .legacy ? 0x02 : 0x0D }
        var otherSubevent: UInt8 { self == .legacy ? 0x0D : 0x02 }
    }

    static let transports: [BumblePeer.ControllerTransport] = [.tcp, .unix, .pty]

    static let legacyFixtures: [ScanAdvertiserFixture] = [.sixteenBit, .oneTwentyEightBit]

    @Test("finds bumble's legacy advertisement with name, 16/128-bit UUIDs and manufacturer data",
          arguments: transports, ReportFormat.allCases)
    func findsBumbleAdvertisement(over transport: BumblePeer.ControllerTransport, reports: ReportFormat) async throws {
        for fixture in Self.legacyFixtures {
            try await findsBumbleAdvertisement(fixture, over: transport, reports: reports)
        }
    }

    func findsBumbleAdvertisement(_ fixture: ScanAdvertiserFixture, over transport: BumblePeer.ControllerTransport,
                                  reports: ReportFormat) async throws {
        #expect(fixture.advertisingDataLength <= 31)
        try await withScanningHost(transport, advertiser: fixture, extraArguments: reports.arguments) { underTest, peer in
            let address = try peer.peripheralAddress
            let controller = try #require(await underTest.host.controller)
            // bumble_link.py's --legacy-reports clears the controller's extended advertising feature,
            // so Bluewire must choose the legacy scan commands (Core Vol 4 Part E §3.1.1).
            if reports == .legacy { #expect(!controller.supportsExtendedScanning) }
            let device = try #require(try await underTest.find(address), "bumble peripheral \(address) (\(fixture.testDescription)) not found over \(transport)")
            expectAdvertisement(device, matches: fixture)
            #expect(device.address == address, "random static address, type random")
            #expect(device.rssi < 0 && device.rssi > -127)
            #expect(underTest.counter.count(reports.subevent) > 0, "no 0x\(String(reports.subevent, radix: 16)) reports arrived")
            #expect(underTest.counter.count(reports.otherSubevent) == 0, "unexpected report format")
            #expect(await underTest.host.scanState == .initial, "the scan stopped when the consumer did")
        }
    }

    @Test("finds bumble's extended advertisement whose data exceeds 31 bytes", arguments: transports)
    func findsExtendedAdvertisementLongerThanLegacyLimit(over transport: BumblePeer.ControllerTransport) async throws {
        var fixture = ScanAdvertiserFixture()
        fixture.advertising = "extended"
        fixture.name = "Bluewire extended advertising"
        fixture.uuid128 = ["6E400001-B5A3-F393-E0A9-E50E24DCCA9E", "0000FEED-0000-1000-8000-00805F9B34FC"]
        fixture.uuid16 = ["180D", "180F", "1812"]
        fixture.manufacturerPayload = Array(0..<24)
        #expect(fixture.advertisingDataLength > 31)
        try await withScanningHost(transport, advertiser: fixture) { underTest, peer in
            let device = try #require(try await underTest.find(peer.peripheralAddress), "extended advertiser not found")
            expectAdvertisement(device, matches: fixture)
            #expect(underTest.counter.count(0x0D) > 0)
        }
    }
}
