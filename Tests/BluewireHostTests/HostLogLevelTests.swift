import Bluewire
import BluewireCore
import BluewireTesting
import Foundation
import HostTestSupport
import Logging
import Synchronization
import Testing

/// What the Host logs at error level: failures only. A transport whose stream ends (a replay played
/// out, a controller process that exits) is how a session may end; callers get `TransportError.closed`
/// and the log says it at notice level, so a passing replay test prints no error line.
@Suite("Host log levels")
struct HostLogLevelTests {
    /// Keeps every message with its level (a swift-log handler; thread-safe).
    final class Recorder: LogHandler, @unchecked Sendable {
        let entries = Mutex<[(Logger.Level, String)]>([])
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            entries.withLock { $0.append((event.level, event.message.description)) }
        }
    }

    @Test("a replay that plays to its end logs the end at notice level, no error")
    func replayEndIsNotAnError() async throws {
        let path = ReplayFixtures.captures.appendingPathComponent("bumble_host_bringup.btsnoop").path
        let transport = try ReplayTransport(capturePath: path, options: .init(strict: true))
        let recorder = Recorder()
        let host = BluetoothHost(
            transport: transport,
            configuration: HostConfiguration(randomAddress: BluetoothAddress(parsing: "C4:5A:17:00:B1:0E/random"), clearsControllerLeftoversAtStart: false),
            clock: TestClock(), logger: Logger(label: "bluewire") { _ in recorder })
        let events = await host.events()
        _ = try await host.start()
        // The capture holds only the bring-up: the replay ends, the Host shuts down, the events end.
        for await _ in events {}
        await host.close()
        try await transport.verify()
        let entries = recorder.entries.withLock { $0 }
        #expect(entries.contains { $0.0 == .notice && $0.1.contains("transport ended") }, "\(entries.map(\.1).suffix(3))")
        #expect(!entries.contains { $0.0 >= .error }, "\(entries.filter { $0.0 >= .error }.map(\.1))")
    }
}
