import Bluewire
import BluewireCore
import BluewireHCI
import BluewireTransport
import Foundation
import Synchronization
import Testing
import PeerTestSupport

/// What the bumble peripheral advertises in the scan interop tests, and its bumble_link arguments.
///
/// Legacy advertising holds 31 bytes (Core Vol 6 Part B §2.3.1.1) and bumble's controller repeats the
/// advertising data as the "scan response", so no legacy advertisement can carry a name, 16-bit and
/// 128-bit UUIDs and manufacturer data at once: `sixteenBit` and `oneTwentyEightBit` split them.
struct ScanAdvertiserFixture: Sendable, CustomTestStringConvertible {
    var name = "BluewireScan"
    var uuid16 = ["180D", "180F"]
    var uuid128: [String] = []
    var companyIdentifier: UInt16 = 0xFFFF
    var manufacturerPayload: [UInt8] = [0x01, 0x02, 0x03]
    /// `legacy` (ADV_IND, at most 31 bytes) or `extended` (an extended advertising set).
    var advertising = "legacy"

    /// Name, two 16-bit UUIDs, manufacturer data: 30 bytes.
    static let sixteenBit = ScanAdvertiserFixture()
    /// Name, a 128-bit UUID, manufacturer data: 30 bytes.
    static let oneTwentyEightBit = ScanAdvertiserFixture(
        name: "Bw", uuid16: [], uuid128: ["6E400001-B5A3-F393-E0A9-E50E24DCCA9E"], manufacturerPayload: [0x7A])

    var testDescription: String { uuid128.isEmpty ? "16-bit UUIDs" : "128-bit UUID" }

    /// The arguments that make bumble_link.py run this advertiser.
    var arguments: [String] {
        // 100 ms rather than bumble's 1 s default: a short scan window still sees several events.
        var result = ["--peripheral", "--name", name, "--advertising", advertising, "--interval", "100",
                      "--manufacturer", String(format: "%04X:", companyIdentifier) + manufacturerPayload.map { String(format: "%02x", $0) }.joined()]
        for uuid in uuid16 { result += ["--uuid16", uuid] }
        for uuid in uuid128 { result += ["--uuid128", uuid] }
        return result
    }

    var expectedServiceUUIDs: [BluetoothUUID] {
        uuid16.compactMap { BluetoothUUID(parsing: $0) } + uuid128.compactMap { BluetoothUUID(parsing: $0) }
    }

    /// The advertising data's size as bumble_link.py builds it (flags, UUID lists, manufacturer, name).
    var advertisingDataLength: Int {
        3 + (uuid16.isEmpty ? 0 : 2 + 2 * uuid16.count) + (uuid128.isEmpty ? 0 : 2 + 16 * uuid128.count)
            + 4 + manufacturerPayload.count + 2 + name.utf8.count
    }
}

/// A transport decorator that counts the LE Meta subevents the controller sends, so that a test can
/// say which advertising report format (0x02 legacy, 0x0D extended) actually carried the data.
final class LESubeventCounter: HCITransport {
    let base: any HCITransport
    private let counts = Mutex<[UInt8: Int]>([:])

    init(wrapping base: any HCITransport) { self.base = base }

    var inbound: HCIInboundPackets {
        base.inbound.observing { [self] packet in
            let payload = packet.payload
            // Event code 0x3E (LE Meta), parameter length, then the subevent code.
            guard packet.type == .event, payload.count >= 3, payload[payload.startIndex] == 0x3E else { return }
            self.counts.withLock { $0[payload[payload.startIndex + 2], default: 0] += 1 }
        }
    }

    func send(_ packet: HCIPacket) async throws(TransportError) {
        let payload = Array(packet.payload)
        if packet.type == .command, payload.count >= 3 {
            commands.withLock { $0.append((UInt16(payload[0]) | UInt16(payload[1]) << 8, Array(payload[3...]))) }
        }
        try await base.send(packet)
    }
    func close() async { await base.close() }

    func count(_ subevent: UInt8) -> Int { counts.withLock { $0[subevent] ?? 0 } }

    private let commands = Mutex<[(opcode: UInt16, parameters: [UInt8])]>([])

    /// Every HCI command the host wrote, in order: opcode and parameters.
    var sentCommands: [(opcode: UInt16, parameters: [UInt8])] { commands.withLock { $0 } }
}

/// A started Bluewire host on one of a bumble link's controllers.
struct ScanHostUnderTest {
    let host: BluetoothHost
    let counter: LESubeventCounter

    /// Opens `transport` (a `--transport` string), optionally records to `capture`, and starts a host.
    static func start(_ transport: String, capture: String? = nil, clock: (any HostClock)? = nil) async throws -> ScanHostUnderTest {
        var base: any HCITransport = try await TransportSpec(parsing: transport).open()
        if let capture { base = try CaptureTap(wrapping: base, path: capture) }
        let counter = LESubeventCounter(wrapping: base)
        let configuration = HostConfiguration(commandTimeout: .seconds(3))
        let host = clock.map { BluetoothHost(transport: counter, configuration: configuration, clock: $0) }
            ?? BluetoothHost(transport: counter, configuration: configuration)
        do {
            try await host.start()
        } catch {
            await host.close()
            throw error
        }
        return ScanHostUnderTest(host: host, counter: counter)
    }

    /// Scans until a device with `address`'s bits shows up, or `duration` ends (then nil).
    func find(_ address: BluetoothAddress, filter: AdvertisingFilter = AdvertisingFilter(),
              duration: TimeSpan = .seconds(6)) async throws -> DiscoveredDevice? {
        for try await device in await host.scan(filter: filter, duration: duration) where device.address.value == address.value {
            await host.stopScan()
            return device
        }
        return nil
    }

    /// Every device the scan yields for `duration`.
    func collect(filter: AdvertisingFilter, duration: TimeSpan) async throws -> [DiscoveredDevice] {
        var devices: [DiscoveredDevice] = []
        for try await device in await host.scan(filter: filter, duration: duration) { devices.append(device) }
        return devices
    }
}

extension BumblePeer {
    /// The bumble peripheral's random static address.
    var peripheralAddress: BluetoothAddress {
        get throws {
            let text = try #require(ready.device?.address, "bumble_link.py started no peripheral")
            let address = try #require(BluetoothAddress(parsing: text), "unparseable bumble address \(text)")
            return BluetoothAddress(value: address.value, type: .random)
        }
    }
}

/// Runs a fresh bumble link with one host-facing controller on `transport` and the advertiser,
/// starts a Bluewire host on it and runs `body`; the host is closed and the link stopped afterwards.
func withScanningHost<R>(
    _ transport: BumblePeer.ControllerTransport = .tcp, advertiser: ScanAdvertiserFixture = ScanAdvertiserFixture(),
    extraArguments: [String] = [], capture: String? = nil, clock: (any HostClock)? = nil,
    _ body: (ScanHostUnderTest, BumblePeer) async throws -> R
) async throws -> R {
    try await withBumblePeer([transport], arguments: advertiser.arguments + extraArguments) { peer in
        let underTest = try await ScanHostUnderTest.start(peer.transports[0], capture: capture, clock: clock)
        do {
            let result = try await body(underTest, peer)
            await underTest.host.close()
            return result
        } catch {
            await underTest.host.close()
            throw error
        }
    }
}

/// Checks that `device` carries everything `fixture` advertised.
func expectAdvertisement(_ device: DiscoveredDevice, matches fixture: ScanAdvertiserFixture,
                         sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(device.name == fixture.name, "name", sourceLocation: sourceLocation)
    #expect(device.serviceUUIDs == fixture.expectedServiceUUIDs, "service UUIDs", sourceLocation: sourceLocation)
    #expect(device.manufacturerData == [DiscoveredDevice.ManufacturerData(
        companyIdentifier: fixture.companyIdentifier, data: fixture.manufacturerPayload)],
        "manufacturer data", sourceLocation: sourceLocation)
    #expect(device.connectable, "ADV_IND / connectable extended advertising", sourceLocation: sourceLocation)
    #expect(device.advertisingData.count == fixture.advertisingDataLength, "advertising data length", sourceLocation: sourceLocation)
}
