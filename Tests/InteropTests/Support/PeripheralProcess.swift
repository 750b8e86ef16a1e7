import Foundation
import Testing
import PeerTestSupport

/// A Bluewire executable of this package (`bluewire`, an example) run as a child process, its
/// standard output collected line by line for the test to wait on.
final class PeripheralProcess: Sendable {
    let lines: EventLog<String>
    private let child: ChildProcess
    private let errorLog: URL

    /// The directory holding this build's products (the test bundle sits beside them).
    static var productsDirectory: URL {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL.deletingLastPathComponent(),
            BumblePeer.repositoryRoot.appendingPathComponent(".build/debug"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("bluewire").path) }
            ?? candidates[2]
    }

    /// `environment` is added to this process's (an `XDG_DATA_HOME` there replaces the per-process one).
    init(_ product: String, _ arguments: [String], input: Bool = false, environment: [String: String] = [:]) throws {
        let executable = Self.productsDirectory.appendingPathComponent(product)
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw WaitTimedOut(description: "\(executable.path) missing: build the package first")
        }
        errorLog = FileManager.default.temporaryDirectory.appendingPathComponent("\(product)-\(UUID().uuidString.prefix(8)).stderr")
        // Default files (`pair`'s bond file) go to a directory of this process, not the user's.
        let childEnvironment = ProcessInfo.processInfo.environment
            .merging(["XDG_DATA_HOME": errorLog.path + ".data"]) { $1 }
            .merging(environment) { $1 }
        child = try ChildProcess(executable, arguments, environment: childEnvironment, input: input, errorLog: errorLog)
        lines = EventLog(child.lines)
    }

    /// The first output line matching `predicate`, waiting for it; a timeout reports what the
    /// process wrote to standard error (it may have exited with an error).
    @discardableResult
    func first(
        _ what: String, within timeout: Duration = .seconds(20), where predicate: @escaping @Sendable (String) -> Bool
    ) async throws -> String {
        do {
            return try await lines.first(within: timeout, what, where: predicate)
        } catch {
            throw WaitTimedOut(description: "\(error)\nstandard error of the process:\n\(standardError)")
        }
    }

    /// Writes a line to the process's standard input.
    func write(line: String) {
        child.write(line: line)
    }

    /// Writes `data` to the process's standard input from a thread of its own, then closes it: a
    /// file piped in, `cmd < file`.
    func pipe(_ data: Data) {
        child.pipe(data)
    }

    /// Closes the process's standard input (end of input).
    func closeInput() {
        child.closeInput()
    }

    /// Sends `signal` (SIGINT, SIGTERM) to the process.
    func send(signal: Int32) {
        child.send(signal: signal)
    }

    /// Waits for the process to exit and returns its status; kills it after `timeout`. Its output
    /// is then complete in `lines` too (the reader has drained the pipe), so the test can look at
    /// every line it printed.
    func exitStatus(within timeout: Duration = .seconds(15)) async -> Int32 {
        let status = await child.exitStatus(within: timeout, signal: SIGTERM)
        let drained = ContinuousClock.now + .seconds(5)
        while !(await lines.isFinished), ContinuousClock.now < drained {
            try? await Task.sleep(for: .milliseconds(5))
        }
        return status
    }

    /// What the process wrote to standard error.
    var standardError: String { child.standardError }

    /// Makes sure the process is gone.
    func stop() {
        child.stop()
        child.removeErrorLog()
    }

    deinit { stop() }
}
