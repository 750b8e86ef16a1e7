import Bluewire
import BluewireCore
import BluewireReplay
import BluewireSnoop
import Foundation
import Logging
import Testing

// The host sessions the bundled bumble captures hold. Each runs the same live, recording against a
// bumble controller (the peer tests, which refresh a capture with BLUEWIRE_UPDATE_CAPTURES), and
// replayed with the capture as the controller (the deterministic host tests).
//
// The bundled host captures were recorded by hosts that did not clear a previous program's leftovers
// at start (the engine tests replay them with the engine's defaults too), so the hosts that record
// and replay them turn `clearsControllerLeftoversAtStart` off.

/// The records of a capture file, or its read error.
public func captureRecords(_ url: URL) throws -> [CaptureRecord] {
    let (records, error) = CaptureReader.readAll(try [UInt8](Data(contentsOf: url)))
    if let error { throw error }
    return records
}

/// The Host's bring-up (`Captures/bumble_host_bringup.btsnoop`).
public enum BringUpCapture {
    public static let captureName = "bumble_host_bringup.btsnoop"
    /// The random static address the recording host used (the capture's LE Set Random Address).
    public static let recordedAddress = BluetoothAddress(parsing: "C4:5A:17:00:B1:0E/random")

    /// Runs a fresh Host's `start()` over a strict replay of `records`, on a virtual clock that never
    /// moves (no command can time out: the replay alone decides what happens).
    public static func bringUp(_ records: [CaptureRecord], address: BluetoothAddress?) async -> (Result<ControllerInfo, HostError>, ReplayTransport) {
        let transport = ReplayTransport(script: ReplayScript(records: records), options: .init(strict: true))
        let host = BluetoothHost(
            transport: transport, configuration: HostConfiguration(randomAddress: address, clearsControllerLeftoversAtStart: false),
            clock: VirtualClock(), logger: .provokedFailure)
        let result: Result<ControllerInfo, HostError>
        do throws(HostError) {
            result = .success(try await host.start())
        } catch {
            result = .failure(error)
        }
        await host.close()
        return (result, transport)
    }
}

/// A whole central session (bring-up, scan, connect, MTU exchange, GATT dump with long reads,
/// disconnect) against a bumble peripheral (`Captures/bumble_central_gatt_dump.btsnoop`).
public enum CentralGATTDumpCapture {
    public static let captureName = "bumble_central_gatt_dump.btsnoop"
    public static let address = BluetoothAddress(parsing: "C4:5A:17:00:B1:0F/random")
    /// A small ATT MTU so that the long value needs Read Blob requests.
    public static let mtu: UInt16 = 64

    /// What the bumble peripheral serves (`bumble_link.py --gatt`): the oracle for what the dump reads.
    public static let longValue = (0..<150).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
    public static let services: [(service: String, characteristics: [(uuid: String, properties: [String], value: [UInt8])])] = [
        ("180F", [("2A19", ["READ", "NOTIFY"], [0x64])]),
        ("6E400001-B5A3-F393-E0A9-E50E24DCCA9E", [
            ("6E400002-B5A3-F393-E0A9-E50E24DCCA9E", ["READ", "WRITE"], Array("Hello".utf8)),
            ("6E400003-B5A3-F393-E0A9-E50E24DCCA9E", ["READ"], longValue),
        ]),
    ]

    /// `services` as `bumble_link.py --gatt` reads it.
    public static var gattDescription: String {
        let services = Self.services.map { service in
            let characteristics = service.characteristics.map { c in
                "{\"uuid\": \"\(c.uuid)\", \"properties\": [\(c.properties.map { "\"\($0)\"" }.joined(separator: ", "))], \"value\": \"\(hexString(c.value))\"}"
            }
            return "{\"uuid\": \"\(service.service)\", \"characteristics\": [\(characteristics.joined(separator: ", "))]}"
        }
        return "{\"services\": [\(services.joined(separator: ", "))]}"
    }

    /// The session, the same live and replayed: the first advertiser found is the peer.
    public static func session(_ host: BluetoothHost) async throws -> GATTDump {
        try await host.start()
        var peer: BluetoothAddress?
        for try await device in await host.scan(filter: AdvertisingFilter(namePrefix: "Replay")) {
            peer = device.address
            break
        }
        let connection = try await host.connect(to: try #require(peer))
        let gatt = await connection.gatt
        _ = try await gatt.exchangeMTU()
        let dump = try await gatt.dump()
        try await connection.disconnect()
        await host.close()
        return dump
    }

    public static func replay(_ url: URL) async throws -> (GATTDump, ReplayTransport) {
        let transport = ReplayTransport(script: ReplayScript(records: try captureRecords(url)), options: .init(strict: true))
        let host = BluetoothHost(
            transport: transport, configuration: HostConfiguration(randomAddress: address, preferredMTU: mtu, clearsControllerLeftoversAtStart: false),
            clock: VirtualClock())
        let dump = try await session(host)
        return (dump, transport)
    }

    /// Checks a dump against what the peripheral serves.
    public static func expectServed(_ dump: GATTDump, sourceLocation: SourceLocation = #_sourceLocation) {
        for service in services {
            for characteristic in service.characteristics {
                let uuid = BluetoothUUID(parsing: characteristic.uuid)
                let handle = dump.attributes.first { $0.type == uuid && $0.properties != nil }?.handle
                #expect(handle.flatMap { dump.values[$0] } == characteristic.value, "value of \(characteristic.uuid)", sourceLocation: sourceLocation)
            }
        }
    }
}

/// A timed scan against a bumble peripheral (`Captures/bumble_scan_duration.btsnoop`), which replays
/// with its timer fired in capture time, not real time.
public enum ScanDurationCapture {
    public static let captureName = "bumble_scan_duration.btsnoop"
    public static let address = BluetoothAddress(parsing: "C4:5A:17:00:B1:10/random")
    public static let duration = TimeSpan.seconds(2)

    /// Bring-up, then a scan that ends when `duration` elapses; the devices seen, in order.
    public static func session(_ host: BluetoothHost) async throws -> [DiscoveredDevice] {
        try await host.start()
        var devices: [DiscoveredDevice] = []
        for try await device in await host.scan(filter: AdvertisingFilter(namePrefix: "Replay"), duration: duration) {
            devices.append(device)
        }
        // The scan's sequence ends before its LE Set Scan Enable (disable) goes out; a command after it
        // keeps the host open until the controller has answered both (else closing may drop the disable).
        _ = try await host.send(.readBDADDR)
        await host.close()
        return devices
    }

    public static func replay(_ url: URL) async throws -> ([DiscoveredDevice], ReplayTransport) {
        let transport = ReplayTransport(script: ReplayScript(records: try captureRecords(url)), options: .init(strict: true))
        let host = BluetoothHost(
            transport: transport, configuration: HostConfiguration(randomAddress: address, clearsControllerLeftoversAtStart: false), clock: transport.hostClock)
        return (try await session(host), transport)
    }
}
