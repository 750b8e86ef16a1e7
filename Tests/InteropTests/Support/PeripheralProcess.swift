import Foundation
import Testing
import PeerTestSupport

/// A Bluewire executable of this package (`bluewire`, an example) run as a child process, its
/// standard output collected line by line for the test to wait on.
final class PeripheralProcess: Sendable {
    let lines: EventLog<String>
    private let process: Process
    private let errorLog: URL
    /// The process's standard input, when started with `input: true`.
    private let input: Pipe?

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
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        errorLog = FileManager.default.temporaryDirectory.appendingPathComponent("\(product)-\(UUID().uuidString.prefix(8)).stderr")
        _ = FileManager.default.createFile(atPath: errorLog.path, contents: nil)
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: errorLog)
        // Default files (`pair`'s bond file) go to a directory of this process, not the user's.
        process.environment = ProcessInfo.processInfo.environment
            .merging(["XDG_DATA_HOME": errorLog.path + ".data"]) { $1 }
            .merging(environment) { $1 }
        let inputPipe = input ? Pipe() : nil
        if let inputPipe { process.standardInput = inputPipe } else { process.standardInput = FileHandle.nullDevice }
        self.input = inputPipe
        let (stream, continuation) = AsyncStream<String>.makeStream()
        let reader = output.fileHandleForReading
        // Blocking reads belong on a thread of their own, not on the cooperative pool.
        Thread.detachNewThread {
            var pending = Data()
            while true {
                let data = reader.availableData
                if data.isEmpty { break }
                pending.append(data)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    continuation.yield(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
            continuation.finish()
        }
        try process.run()
        self.process = process
        lines = EventLog(stream)
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
        input?.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Writes `data` to the process's standard input from a thread of its own (a pipe blocks the
    /// writer until the process reads), then closes it: a file piped in, `cmd < file`.
    func pipe(_ data: Data) {
        guard let handle = input?.fileHandleForWriting else { return }
        Thread.detachNewThread {
            handle.write(data)
            try? handle.close()
        }
    }

    /// Closes the process's standard input (end of input).
    func closeInput() {
        try? input?.fileHandleForWriting.close()
    }

    /// Sends `signal` (SIGINT, SIGTERM) to the process.
    func send(signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits for the process to exit and returns its status; kills it after `timeout`. Its output
    /// is then complete in `lines` too (the reader has drained the pipe), so the test can look at
    /// every line it printed.
    func exitStatus(within timeout: Duration = .seconds(15)) async -> Int32 {
        let process = self.process
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            if process.isRunning { process.terminate() }
        }
        defer { watchdog.cancel() }
        // waitUntilExit blocks: run it off the cooperative pool.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                process.waitUntilExit()
                continuation.resume()
            }
        }
        let drained = ContinuousClock.now + .seconds(5)
        while !(await lines.isFinished), ContinuousClock.now < drained {
            try? await Task.sleep(for: .milliseconds(5))
        }
        return process.terminationStatus
    }

    /// What the process wrote to standard error.
    var standardError: String { (try? String(contentsOf: errorLog, encoding: .utf8)) ?? "" }

    /// Makes sure the process is gone.
    func stop() {
        if process.isRunning { process.terminate() }
        // Also when the child has already exited: only waitUntilExit() releases the run-loop source through
        // which Foundation's Process retains itself (without it the Process leaks).
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: errorLog)
    }

    deinit { stop() }
}
