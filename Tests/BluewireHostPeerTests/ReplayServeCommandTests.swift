import BluewireCore
import BluewireSnoop
import Foundation
import HostTestSupport
import PeerTestSupport
import Testing

/// `bluewire replay FILE -- serve ...` run as a process: a `serve` session that Bluewire recorded
/// (`--capture`) while a bumble central discovered, read and subscribed
/// (`Captures/bumble_serve_session.btsnoop`) runs again with the capture as the controller.
@Suite("bluewire replay -- serve")
struct ReplayServeCommandTests {
    static let captureName = "bumble_serve_session.btsnoop"
    static let address = "C4:5A:17:00:B1:11"
    /// The database served (services form), written to a temporary file for each run.
    static let database = """
        { "services": [
          { "uuid": "0x180f", "characteristics": [ { "uuid": "0x2a19", "properties": ["read", "notify"], "value": "64" } ] },
          { "uuid": "0xfff0", "characteristics": [
            { "uuid": "0xfff1", "properties": ["read", "write"], "value": "48656c6c6f" },
            { "uuid": "0xfff2", "properties": ["read", "indicate"], "value": "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e" } ] } ] }
        """

    struct Run {
        var status: Int32
        var stdout: [String]
        var stderr: String
    }

    /// The `bluewire` executable beside the test bundle (or in .build/debug).
    static var executable: URL? { BluewireExecutable.url }

    /// Starts `bluewire arguments...`; `finish` waits for it (killing it after `limit`) and collects its output.
    static func start(_ arguments: [String]) throws -> (process: ChildProcess, finish: (Duration) async -> Run) {
        let binary = try #require(executable, "the bluewire executable was not built")
        // serve's default bond file goes to a directory of this run, never the user's data directory.
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("replay-serve-data-\(UUID().uuidString.prefix(8))")
        let process = try ChildProcess(
            binary, arguments, environment: ProcessInfo.processInfo.environment.merging(["XDG_DATA_HOME": data.path]) { $1 })
        let lines = process.lines
        let stdout = Task {
            var collected: [String] = []
            for await line in lines { collected.append(line) }
            return collected
        }
        let finish: (Duration) async -> Run = { limit in
            defer {
                try? FileManager.default.removeItem(at: data)
                process.removeErrorLog()
            }
            let status = await process.exitStatus(within: limit)
            return Run(status: status, stdout: await stdout.value.filter { !$0.isEmpty }, stderr: process.standardError)
        }
        return (process, finish)
    }

    static func withDatabaseFile<R>(_ body: (URL) async throws -> R) async throws -> R {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("bluewire-serve-\(UUID().uuidString.prefix(8)).json")
        try database.write(to: url, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: url) }
        return try await body(url)
    }

    /// Replays at the capture's pace: delivered back to back, the Connection Complete that follows the
    /// Advertising Enable's Command Complete by 47 ms overtakes it inside the Host (see the final report:
    /// the Host then never resumes advertising), a race of the Host that host-driven replay exposes.
    static func replay(_ capture: URL, database: URL) async throws -> Run {
        try await start(["replay", capture.path, "--capture-pace", "--", "serve", "--db", database.path]).finish(.seconds(60))
    }

    @Test("the recorded serve session replays strictly: same events, stopped by SIGINT once idle, status 0")
    func recordedServeReplays() async throws {
        let run = try await Self.withDatabaseFile { db in
            try await Self.replay(ReplayFixtures.captures.appendingPathComponent(Self.captureName), database: db)
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stderr.isEmpty)
        #expect(run.stdout.first?.hasPrefix("advertising \"Bluewire\" as \(Self.address)/random") == true, "\(run.stdout)")
        #expect(run.stdout.contains { $0.hasPrefix("connected 0x") })
        #expect(run.stdout.contains { $0.hasPrefix("read ") })
        #expect(run.stdout.last == "stopped (SIGINT)")
    }

    @Test("a capture altered in one host packet fails the replay with its record index and a hex diff")
    func alteredCaptureFails() async throws {
        var bytes = try [UInt8](Data(contentsOf: ReplayFixtures.captures.appendingPathComponent(Self.captureName)))
        let (records, _) = CaptureReader.readAll(bytes)
        // The last byte of the first ATT PDU the host sent (a Read Response value).
        let record = try #require(records.first { $0.direction == .hostToController && $0.packet?.type == .acl })
        bytes[record.offset + 24 + record.data.count - 1] ^= 0xFF
        let altered = FileManager.default.temporaryDirectory.appendingPathComponent("bluewire-altered-\(UUID().uuidString.prefix(8)).btsnoop")
        try Data(bytes).write(to: altered)
        defer { try? FileManager.default.removeItem(at: altered) }
        let run = try await Self.withDatabaseFile { db in try await Self.replay(altered, database: db) }
        #expect(run.status != 0)
        #expect(run.stderr.contains("replay mismatch at record \(record.index)"), "stderr: \(run.stderr)")
        #expect(run.stderr.contains("expected ") && run.stderr.contains("actual "))
    }

    @Test("a serve session recorded live with a bumble central replays with the same events",
          .enabled(if: executable != nil))
    func recordThenReplay() async throws {
        let update = ProcessInfo.processInfo.environment["BLUEWIRE_UPDATE_CAPTURES"] != nil
        let capture = update ? ReplayFixtures.captures.appendingPathComponent(Self.captureName)
            : FileManager.default.temporaryDirectory.appendingPathComponent("bluewire-serve-\(UUID().uuidString.prefix(8)).btsnoop")
        defer { if !update { try? FileManager.default.removeItem(at: capture) } }
        try await Self.withDatabaseFile { db in
            try await withBumblePeer([.tcp], arguments: ["--central", Self.address]) { bumble in
                let (serve, finish) = try Self.start([
                    "serve", "--db", db.path, "--transport", bumble.transports[0], "--own-address", Self.address, "--capture", capture.path,
                ])
                let events = bumble.events
                let discovered = Task {
                    for await event in events where event.contains("\"discovered\"") { return true }
                    return false
                }
                let watchdog = Task {
                    try await Task.sleep(for: .seconds(30))
                    discovered.cancel()
                }
                #expect(await discovered.value, "bumble's central never finished discovery")
                watchdog.cancel()
                kill(serve.processIdentifier, SIGINT)
                let live = await finish(.seconds(30))
                #expect(live.status == 0, "stderr: \(live.stderr)")

                let replayed = try await Self.replay(capture, database: db)
                #expect(replayed.status == 0, "stderr: \(replayed.stderr)")
                #expect(replayed.stdout == live.stdout)
            }
        }
    }
}
