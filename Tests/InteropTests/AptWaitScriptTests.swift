import Foundation
import PeerTestSupport
import Testing

/// `scripts/apt-wait.sh`, which the set-up scripts run apt-get through: while another package
/// manager holds the lock it waits (bounded, saying so once) instead of failing at once with exit 100.
///
/// apt-get here is a stand-in on PATH that answers as the real one does while dpkg's lock is held
/// (its message and status 100): holding the real lock would stop every other apt on the machine.
@Suite("scripts/apt-wait.sh: the set-up waits for the package manager's lock")
struct AptWaitScriptTests {
    /// A directory with an `apt-get` that fails `busy` times with the lock message, then succeeds.
    static func fakeAptGet(busy: Int) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("apt-wait-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let script = """
            #!/bin/bash
            count=$(cat "\(directory.path)/count" 2>/dev/null || echo 0)
            echo $((count + 1)) > "\(directory.path)/count"
            if [ "$count" -lt \(busy) ]; then
              echo "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)" >&2
              echo "E: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), is another process using it?" >&2
              exit 100
            fi
            echo "apt-get $*"
            """
        let file = directory.appendingPathComponent("apt-get")
        try script.write(to: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: file.path)
        return directory
    }

    static func run(_ fake: URL, wait: Int) async throws -> ProcessResult {
        let helper = BumblePeer.repositoryRoot.appendingPathComponent("scripts/apt-wait.sh").path
        return try await ProcessRunner.run(URL(fileURLWithPath: "/bin/bash"), ["-c", "source \(helper); apt_get install -y pkg-config"], timeout: .seconds(60),
                                           environment: [
                                               "PATH": fake.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
                                               "BLUEWIRE_APT_LOCK_WAIT": "\(wait)", "BLUEWIRE_APT_LOCK_POLL": "1",
                                           ])
    }

    @Test("a lock released while waiting: one line says who holds it, then apt-get runs and succeeds", .enabled(if: getuid() == 0))
    func waitsForTheLock() async throws {
        let fake = try Self.fakeAptGet(busy: 2)
        defer { try? FileManager.default.removeItem(at: fake) }
        let result = try await Self.run(fake, wait: 30)
        #expect(result.status == 0, "stderr: \(result.standardError)")
        #expect(result.standardOutput == "apt-get install -y pkg-config\n")
        let lines = result.standardError.split(separator: "\n")
        #expect(lines.count == 1, "one line while waiting: \(result.standardError)")
        #expect(lines.first?.contains("waiting up to 30 s for another package manager to finish") == true
                && lines.first?.contains("held by process 4242 (apt-get)") == true, "\(result.standardError)")
        #expect(try String(contentsOf: fake.appendingPathComponent("count"), encoding: .utf8) == "3\n", "tried three times")
    }

    @Test("a lock held past the bound: apt-get's status, and one line saying the lock is still held", .enabled(if: getuid() == 0))
    func boundedWait() async throws {
        let fake = try Self.fakeAptGet(busy: 1_000)
        defer { try? FileManager.default.removeItem(at: fake) }
        let result = try await Self.run(fake, wait: 2)
        #expect(result.status == 100)
        #expect(result.standardError.contains("the package manager's lock is still held after 2 s"), "\(result.standardError)")
        #expect(!result.standardError.contains("E: Could not get lock"), "apt-get's own lines are summarised, not repeated")
    }
}
