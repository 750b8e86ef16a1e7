import Bluewire
import BluewireCore
import BluewireHCI
import BluewireSnoop
import BluewireTesting
import BluewireTransport
import PeerTestSupport
import Foundation
import Testing

/// The Host's bring-up replayed against a capture Bluewire recorded with a bumble controller
/// (`Captures/bumble_host_bringup.btsnoop`): no bumble runs, the capture is the controller.
/// The bundled host captures were recorded by hosts that did not clear a previous program's
/// leftovers at start (the engine tests replay them with the engine's defaults too), so the hosts
/// that record and replay them here, and in the other replay suites, turn
/// `clearsControllerLeftoversAtStart` off.
@Suite("Host bring-up replayed from a bumble capture")
struct ReplayHostBringUpTests {
    static let captureName = "bumble_host_bringup.btsnoop"
    /// The random static address the recording host used (the capture's LE Set Random Address).
    static let recordedAddress = BluetoothAddress(parsing: "C4:5A:17:00:B1:0E/random")

    static func records(_ url: URL) throws -> [CaptureRecord] {
        let (records, error) = CaptureReader.readAll(try [UInt8](Data(contentsOf: url)))
        if let error { throw error }
        return records
    }

    /// Runs a fresh Host's `start()` over a strict replay of `records`, on a virtual clock that never
    /// moves (no command can time out: the replay alone decides what happens).
    static func bringUp(_ records: [CaptureRecord], address: BluetoothAddress?) async -> (Result<ControllerInfo, HostError>, ReplayTransport) {
        let transport = ReplayTransport(script: ReplayScript(records: records), options: .init(strict: true))
        let host = BluetoothHost(
            transport: transport, configuration: HostConfiguration(randomAddress: address, clearsControllerLeftoversAtStart: false),
            clock: TestClock(), logger: .provokedFailure)
        let result: Result<ControllerInfo, HostError>
        do throws(HostError) {
            result = .success(try await host.start())
        } catch {
            result = .failure(error)
        }
        await host.close()
        return (result, transport)
    }

    @Test("bring-up replays byte-exactly and learns what the bumble controller answered")
    func bringUpReplaysStrictly() async throws {
        let records = try Self.records(ReplayFixtures.captures.appendingPathComponent(Self.captureName))
        let (result, transport) = await Self.bringUp(records, address: Self.recordedAddress)
        let info = try result.get()
        try await transport.verify()
        #expect(await transport.unsentPackets.isEmpty)
        #expect(await transport.sentCount == records.filter { $0.direction == .hostToController }.count)
        // Values of the capture's Command Completes (bluewire decode / tshark show the same).
        #expect(info.randomAddress == Self.recordedAddress)
        // Read BD_ADDR's Command Complete: 0e 0a 01 09 10 <status> <6 address octets, little-endian>.
        let readBDAddr = try #require(records.compactMap(\.packet).first {
            $0.type == .event && $0.payload.count == 12 && $0.payload.prefix(5).elementsEqual([0x0E, 0x0A, 0x01, 0x09, 0x10])
        })
        let octets = Array(readBDAddr.payload.suffix(6))
        #expect(info.publicAddress == BluetoothAddress(octets[5], octets[4], octets[3], octets[2], octets[1], octets[0]))
        #expect(info.leACLDataPacketLength == 27)
        #expect(info.totalNumLEACLDataPackets == 64)
        #expect(info.version.hciVersion == 9)
        #expect(info.version.companyIdentifier == 0xFFFF)
    }

    @Test("two replays of the bring-up learn the same controller and exchange the same packets")
    func bringUpIsDeterministic() async throws {
        let records = try Self.records(ReplayFixtures.captures.appendingPathComponent(Self.captureName))
        let (first, firstTransport) = await Self.bringUp(records, address: Self.recordedAddress)
        let (second, secondTransport) = await Self.bringUp(records, address: Self.recordedAddress)
        #expect(try first.get() == second.get())
        #expect(await firstTransport.sentCount == secondTransport.sentCount)
        #expect(await firstTransport.deliveredCount == secondTransport.deliveredCount)
    }

    @Test("a host using another address than the recording fails at LE Set Random Address with a hex diff")
    func differentAddressFailsWithDiff() async throws {
        let records = try Self.records(ReplayFixtures.captures.appendingPathComponent(Self.captureName))
        let other = BluetoothAddress.randomStatic(0x0102_0304_0506)
        let (result, transport) = await Self.bringUp(records, address: other)
        guard case .failure = result else {
            Issue.record("bring-up with another address must fail")
            return
        }
        let failure = try #require(await transport.failure)
        let setRandomAddress = try #require(records.first {
            $0.packet?.type == .command && $0.packet?.payload.prefix(2).elementsEqual([0x05, 0x20]) == true
        })
        #expect(failure.reason == .differentBytes)
        #expect(failure.recordIndex == setRandomAddress.index)
        #expect(failure.actual?.payload.suffix(6).elementsEqual(other.littleEndianBytes) == true)
        #expect(failure.diff.contains("^^"))
    }

    @Test("a recording from a live bumble controller replays strictly against a fresh host",
          .enabled(if: BumbleController.python != nil))
    func recordThenReplay() async throws {
        let update = ProcessInfo.processInfo.environment["BLUEWIRE_UPDATE_CAPTURES"] != nil
        let url = update ? ReplayFixtures.captures.appendingPathComponent(Self.captureName)
            : FileManager.default.temporaryDirectory.appendingPathComponent("bluewire-bringup-\(UUID().uuidString).btsnoop")
        defer { if !update { try? FileManager.default.removeItem(at: url) } }
        let bumble = try BumbleController.start()
        defer { bumble.stop() }
        let live = try await TransportSpec(parsing: bumble.transport).open()
        let tap = try CaptureTap(wrapping: live, path: url.path)
        let host = BluetoothHost(transport: tap, configuration: HostConfiguration(randomAddress: Self.recordedAddress, clearsControllerLeftoversAtStart: false))
        let recorded = try await host.start()
        await host.close()

        let (replayed, transport) = await Self.bringUp(try Self.records(url), address: Self.recordedAddress)
        #expect(try replayed.get() == recorded)
        try await transport.verify()
    }
}

/// One bumble controller from `Tests/Peers/bumble_link.py`, listening on TCP.
final class BumbleController: Sendable {
    let process: Process
    let input: Pipe
    /// `tcp:127.0.0.1:PORT`, as `--transport` spells it.
    let transport: String
    /// The address of the bumble Device (`--peripheral`, `--central`), if one runs.
    let deviceAddress: String?
    /// The script's `EVENT` lines after READY, as their JSON text.
    let events: AsyncStream<String>

    /// `BLUEWIRE_PYTHON`, else the repository's `.venv/bin/python` (scripts/setup-test-env.sh), if present.
    static var python: String? {
        let root = ReplayFixtures.captures.deletingLastPathComponent()
        let path = ProcessInfo.processInfo.environment["BLUEWIRE_PYTHON"] ?? root.appendingPathComponent(".venv/bin/python").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    struct StartError: Error, CustomStringConvertible { var description: String }

    /// Starts one TCP controller for Bluewire plus whatever `arguments` ask for (`--peripheral --gatt F`).
    static func start(arguments: [String] = []) throws -> BumbleController {
        try PeerRequirement.requireBumble()
        guard let python else { throw StartError(description: "no python with bumble") }
        let script = ReplayFixtures.captures.deletingLastPathComponent().appendingPathComponent("Tests/Peers/bumble_link.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script.path, "tcp-server:127.0.0.1:0"] + arguments
        let output = Pipe(), input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The script prints READY {...} once it listens, or exits; a read of its first line ends either way.
        var line = Data()
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte.first == UInt8(ascii: "\n") { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("READY "),
              let ready = try JSONSerialization.jsonObject(with: Data(text.dropFirst(6).utf8)) as? [String: Any],
              let controllers = ready["controllers"] as? [[String: Any]],
              let transport = controllers.first?["transport"] as? String else {
            process.terminate()
            throw StartError(description: "bumble_link.py did not get ready: \(text)")
        }
        let device = (ready["device"] as? [String: Any])?["address"] as? String
        let (events, continuation) = AsyncStream<String>.makeStream()
        let reader = output.fileHandleForReading
        // Blocking reads belong on a thread of their own, not on the cooperative pool.
        Thread.detachNewThread {
            var pending = Data()
            while true {
                let data = reader.availableData
                if data.isEmpty { break }
                pending.append(data)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    if line.hasPrefix("EVENT ") { continuation.yield(String(line.dropFirst(6))) }
                }
            }
            continuation.finish()
        }
        return BumbleController(process: process, input: input, transport: transport, deviceAddress: device, events: events)
    }

    private init(process: Process, input: Pipe, transport: String, deviceAddress: String?, events: AsyncStream<String>) {
        self.process = process
        self.input = input
        self.transport = transport
        self.deviceAddress = deviceAddress
        self.events = events
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        // Also when the child has already exited: only waitUntilExit() releases the run-loop source through
        // which Foundation's Process retains itself (without it the Process leaks).
        process.waitUntilExit()
    }
}
