import Bluewire
// Only the umbrella import: the articles say `import Bluewire` is enough (Sources/Bluewire/Exports.swift).
import BluewireTesting
import Foundation
import HostTestSupport
import Testing

// The articles' code is type-checked from the articles themselves by DocumentationCompileTests; this
// suite runs the one snippet that needs no controller.

@Suite("Documentation: article snippets and shipped example files")
struct DocumentationSnippetsTests {
    /// ReplayingACapture.md, "Replay in a test", with the capture path made absolute.
    @Test("the replay article's test replays Captures/bumble_host_bringup.btsnoop strictly")
    func bringUpReplays() async throws {
        let path = ReplayFixtures.captures.appendingPathComponent("bumble_host_bringup.btsnoop").path
        let transport = try ReplayTransport(capturePath: path,
                                            options: .init(strict: true))
        let host = BluetoothHost(
            transport: transport,
            configuration: HostConfiguration(randomAddress: BluetoothAddress(parsing: "C4:5A:17:00:B1:0E/random"),
                                             clearsControllerLeftoversAtStart: false),
            clock: TestClock())
        let controller = try await host.start()
        await host.close()
        try await transport.verify()
        #expect(controller.leACLDataPacketLength == 27)
    }

    /// The database file README's `bluewire serve --db Examples/device.json` names.
    @Test("Examples/device.json loads: 12 attributes, the Device Name and a long descriptor README's session reads")
    func exampleDatabaseLoads() throws {
        let url = ReplayFixtures.captures.deletingLastPathComponent()
            .appendingPathComponent("Examples").appendingPathComponent("device.json")
        let database = try GATTDatabase(jsonBytes: Array(try Data(contentsOf: url))[...])
        #expect(database.attributes.count == 12)
        #expect(database[handle: 3]?.cachedValue == Array("Thermometer".utf8))
        #expect(database[handle: 9]?.cachedValue.map { Array($0.dropFirst(22)) } == Array("s more".utf8))
        #expect(database[handle: 12]?.type == BluetoothUUID(0x2902))
    }
}
