import Bluewire
import BluewireCore
import BluewireTransport
import Foundation
import HostTestSupport
import PeerTestSupport
import Testing

/// The bundled host captures recorded again, live against a bumble controller, and replayed strictly
/// against a fresh host: what the replay suites of BluewireHostTests replay (`BringUpCapture`,
/// `CentralGATTDumpCapture`, `ScanDurationCapture`) is what a live host does. With
/// BLUEWIRE_UPDATE_CAPTURES set, the recordings replace the bundled captures.
@Suite("Replay: sessions recorded live against bumble replay strictly")
struct ReplayRecordingBumbleTests {
    /// Where a recording goes: the bundled capture when updating, else a temporary file.
    static func recording(_ captureName: String, _ body: (URL) async throws -> Void) async throws {
        let update = ProcessInfo.processInfo.environment["BLUEWIRE_UPDATE_CAPTURES"] != nil
        let url = update ? ReplayFixtures.captures.appendingPathComponent(captureName)
            : FileManager.default.temporaryDirectory.appendingPathComponent("bluewire-recording-\(UUID().uuidString).btsnoop")
        defer { if !update { try? FileManager.default.removeItem(at: url) } }
        try await body(url)
    }

    @Test("a bring-up recorded from a live bumble controller replays strictly against a fresh host")
    func bringUp() async throws {
        try await Self.recording(BringUpCapture.captureName) { url in
            try await withBumblePeer([.tcp]) { peer in
                let live = try await TransportSpec(parsing: peer.transports[0]).open()
                let tap = try CaptureTap(wrapping: live, path: url.path)
                let host = BluetoothHost(transport: tap, configuration: HostConfiguration(
                    randomAddress: BringUpCapture.recordedAddress, clearsControllerLeftoversAtStart: false))
                let recorded = try await host.start()
                await host.close()

                let (replayed, transport) = await BringUpCapture.bringUp(try captureRecords(url), address: BringUpCapture.recordedAddress)
                #expect(try replayed.get() == recorded)
                try await transport.verify()
            }
        }
    }

    @Test("a central session recorded live against a bumble peripheral replays strictly with the same dump")
    func centralSession() async throws {
        let gattFile = FileManager.default.temporaryDirectory.appendingPathComponent("bluewire-gatt-\(UUID().uuidString).json")
        try CentralGATTDumpCapture.gattDescription.write(to: gattFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: gattFile) }
        try await Self.recording(CentralGATTDumpCapture.captureName) { url in
            try await withBumblePeer([.tcp], arguments: ["--peripheral", "--name", "Replay peripheral", "--gatt", gattFile.path]) { peer in
                let live = try CaptureTap(wrapping: try await TransportSpec(parsing: peer.transports[0]).open(), path: url.path)
                let host = BluetoothHost(transport: live, configuration: HostConfiguration(
                    randomAddress: CentralGATTDumpCapture.address, preferredMTU: CentralGATTDumpCapture.mtu,
                    clearsControllerLeftoversAtStart: false))
                let recorded = try await CentralGATTDumpCapture.session(host)
                CentralGATTDumpCapture.expectServed(recorded)

                let (replayed, transport) = try await CentralGATTDumpCapture.replay(url)
                try await transport.verify()
                #expect(replayed == recorded)
            }
        }
    }

    @Test("a timed scan recorded live against a bumble peripheral replays strictly with the same devices")
    func timedScan() async throws {
        try await Self.recording(ScanDurationCapture.captureName) { url in
            try await withBumblePeer([.tcp], arguments: ["--peripheral", "--name", "Replay scanner peer"]) { peer in
                let live = try CaptureTap(wrapping: try await TransportSpec(parsing: peer.transports[0]).open(), path: url.path)
                let recorded = try await ScanDurationCapture.session(BluetoothHost(transport: live, configuration: HostConfiguration(
                    randomAddress: ScanDurationCapture.address, clearsControllerLeftoversAtStart: false)))
                #expect(!recorded.isEmpty)

                let (replayed, transport) = try await ScanDurationCapture.replay(url)
                try await transport.verify()
                // `lastSeen` is host time: live it is the machine's clock, replayed the capture's timestamps.
                func timeless(_ devices: [DiscoveredDevice]) -> [DiscoveredDevice] {
                    devices.map { var device = $0; device.lastSeen = .zero; return device }
                }
                #expect(timeless(replayed) == timeless(recorded))
            }
        }
    }
}
