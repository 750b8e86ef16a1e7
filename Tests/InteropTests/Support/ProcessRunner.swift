import Foundation
import Testing
import PeerTestSupport

/// Runs a program to completion with a time limit and returns its exit status and output.
struct ProcessResult: Sendable {
    var status: Int32
    var standardOutput: String
    var standardError: String

    var outputLines: [String] { standardOutput.split(separator: "\n").map(String.init) }
}

enum ProcessRunner {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The `bluewire` executable of this build (next to the test bundle), or `$BLUEWIRE_BINARY`.
    static var bluewire: URL {
        get throws {
            if let path = ProcessInfo.processInfo.environment["BLUEWIRE_BINARY"] { return URL(fileURLWithPath: path) }
            let candidates = [
                URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("bluewire"),
                Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("bluewire"),
                BumblePeer.repositoryRoot.appendingPathComponent(".build/debug/bluewire"),
            ]
            guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
                throw Failure(description: "no bluewire executable next to the tests: run `swift build` first")
            }
            return found
        }
    }

    /// Finds `name` on PATH.
    static func which(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// Runs `executable` with `arguments`; kills it (and fails) after `timeout`. The child's
    /// `XDG_DATA_HOME` is a directory of this run (removed afterwards), so a command's default files
    /// (`pair`'s bond file) never reach the user's data directory or another test; `environment`
    /// adds or replaces variables.
    static func run(
        _ executable: URL, _ arguments: [String], timeout: Duration = .seconds(20), environment: [String: String] = [:]
    ) async throws -> ProcessResult {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        // Output goes to files: pipes would need a reader thread to keep a chatty child from blocking.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("run-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        process.environment = ProcessInfo.processInfo.environment
            .merging(["XDG_DATA_HOME": directory.appendingPathComponent("data").path]) { $1 }
            .merging(environment) { $1 }
        let out = directory.appendingPathComponent("stdout"), err = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        let (ended, continuation) = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in continuation.yield(); continuation.finish() }
        try process.run()
        let pid = process.processIdentifier
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            kill(pid, SIGKILL)
        }
        for await _ in ended { break }
        watchdog.cancel()
        // Foundation's Process keeps a run-loop source that retains the process until waitUntilExit()
        // releases it; without this call every Process run here leaks (LeakSanitizer). The child has
        // exited (the termination handler ran after Foundation cleared isRunning), so it returns at once.
        process.waitUntilExit()
        let result = ProcessResult(
            status: process.terminationStatus,
            standardOutput: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
            standardError: (try? String(contentsOf: err, encoding: .utf8)) ?? "")
        if process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL {
            throw Failure(description: "\(executable.lastPathComponent) \(arguments.joined(separator: " ")) did not finish within \(timeout)")
        }
        return result
    }
}

/// Every key of a JSON value the CLI printed (objects within arrays and objects too) is snake_case:
/// lower-case letters, digits and `_` (Docs/CommandLine.md, "JSON").
func expectSnakeCaseKeys(_ value: Any, path: String = "$", sourceLocation: SourceLocation = #_sourceLocation) {
    if let object = value as? [String: Any] {
        for (key, member) in object {
            let snake = !key.isEmpty && key.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
            #expect(snake, "key \(path).\(key) is not snake_case", sourceLocation: sourceLocation)
            expectSnakeCaseKeys(member, path: path + "." + key, sourceLocation: sourceLocation)
        }
    } else if let array = value as? [Any] {
        for (index, member) in array.enumerated() {
            expectSnakeCaseKeys(member, path: path + "[\(index)]", sourceLocation: sourceLocation)
        }
    }
}
