import Foundation

/// A program a test runs as a child process: a bumble peer script, the `bluewire` executable, an
/// example, tshark, the compiler. The one place the test targets build a `Process`, so every child
/// gets the same handling: its standard output read line by line on a thread of its own (a chatty
/// child never blocks on a full pipe), its standard error kept in a file for the failure message,
/// a bounded stop, and the `waitUntilExit()` that releases Foundation's run-loop source (without it
/// every Process leaks).
public final class ChildProcess: Sendable {
    /// The child's standard output, line by line, finished when the child closes it.
    public let lines: AsyncStream<String>
    private let process: Process
    private let input: Pipe?
    private let errorLog: URL

    /// Starts `executable` with `arguments`. `environment` replaces the child's environment (nil: this
    /// process's); with `input` the child reads a pipe that `write(line:)` and `pipe(_:)` feed, else
    /// nothing (`/dev/null`). Standard error goes to `errorLog` (a temporary file when nil).
    public init(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, input: Bool = false, errorLog: URL? = nil
    ) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let errorLog = errorLog ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("\(executable.lastPathComponent)-\(UUID().uuidString.prefix(8)).stderr")
        _ = FileManager.default.createFile(atPath: errorLog.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: errorLog)
        let inputPipe = input ? Pipe() : nil
        if let inputPipe { process.standardInput = inputPipe } else { process.standardInput = FileHandle.nullDevice }
        let output = Pipe()
        process.standardOutput = output
        let (lines, continuation) = AsyncStream<String>.makeStream()
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
            if !pending.isEmpty { continuation.yield(String(decoding: pending, as: UTF8.self)) }
            continuation.finish()
        }
        try process.run()
        self.process = process
        self.input = inputPipe
        self.errorLog = errorLog
        self.lines = lines
    }

    public var processIdentifier: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }
    public var terminationStatus: Int32 { process.terminationStatus }
    public var terminationReason: Process.TerminationReason { process.terminationReason }

    /// What the child wrote to standard error so far.
    public var standardError: String { (try? String(contentsOf: errorLog, encoding: .utf8)) ?? "" }

    /// Writes a line to the child's standard input.
    public func write(line: String) {
        input?.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Writes `data` to the child's standard input from a thread of its own (a pipe blocks the writer
    /// until the child reads), then closes it: a file piped in, `cmd < file`.
    public func pipe(_ data: Data) {
        guard let handle = input?.fileHandleForWriting else { return }
        Thread.detachNewThread {
            handle.write(data)
            try? handle.close()
        }
    }

    /// Closes the child's standard input (end of input).
    public func closeInput() {
        try? input?.fileHandleForWriting.close()
    }

    /// Sends `signal` (SIGINT, SIGTERM) to the child.
    public func send(signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits for the child to exit, sending it `signal` (SIGKILL, or SIGTERM for a child that should
    /// still say why it stopped) after `timeout`; returns its status.
    @discardableResult
    public func exitStatus(within timeout: Duration, signal: Int32 = SIGKILL) async -> Int32 {
        let pid = process.processIdentifier
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            kill(pid, signal)
        }
        defer { watchdog.cancel() }
        let process = self.process
        // waitUntilExit blocks: run it off the cooperative pool.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                process.waitUntilExit()
                continuation.resume()
            }
        }
        return process.terminationStatus
    }

    /// Stops the child: its standard input closed and SIGTERM, then SIGKILL if it has not exited within
    /// `grace`. Never waits unbounded: a child stuck in its own shutdown must not hang the run.
    public func stop(grace: Duration = .seconds(10)) {
        try? input?.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        let deadline = ContinuousClock.now + grace
        while process.isRunning, ContinuousClock.now < deadline { usleep(20_000) }
        if process.isRunning {
            FileHandle.standardError.write(Data("child \(process.executableURL?.lastPathComponent ?? "") \(process.processIdentifier) ignored SIGTERM for \(grace): killed\n".utf8))
            kill(process.processIdentifier, SIGKILL)
        }
        // Also when the child has already exited: only waitUntilExit() releases the run-loop source through
        // which Foundation's Process retains itself.
        process.waitUntilExit()
    }

    /// Removes the standard error file (after `stop`).
    public func removeErrorLog() {
        try? FileManager.default.removeItem(at: errorLog)
    }

    deinit { stop(grace: .seconds(5)) }
}

/// How a program run to completion ended, and what it wrote.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var reason: Process.TerminationReason
    public var standardOutput: String
    public var standardError: String

    public var outputLines: [String] { standardOutput.split(separator: "\n").map(String.init) }
}

extension ChildProcess {
    public struct TimedOut: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs `executable` to completion and returns its status and output; kills it and throws after
    /// `timeout`. `environment` adds or replaces variables of this process's; `input` is a file the
    /// child reads as its standard input (`cmd < file`).
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:], input: URL? = nil,
        timeout: Duration = .seconds(120)
    ) async throws -> ProcessResult {
        let run = try Completed(executable, arguments, environment: environment, input: input)
        defer { run.remove() }
        let (ended, continuation) = AsyncStream<Void>.makeStream()
        run.process.terminationHandler = { _ in continuation.yield(); continuation.finish() }
        try run.process.run()
        let pid = run.process.processIdentifier
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            kill(pid, SIGKILL)
        }
        for await _ in ended { break }
        watchdog.cancel()
        let result = run.result()
        if result.reason == .uncaughtSignal && result.status == SIGKILL {
            throw TimedOut(description: "\(executable.lastPathComponent) \(arguments.joined(separator: " ")) did not finish within \(timeout)")
        }
        return result
    }

    /// `run` for a synchronous caller (a test helper that is not async): blocks this thread until the
    /// child has exited, so only for short programs (tshark, nm, readelf, the compiler).
    public static func runBlocking(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:], input: URL? = nil
    ) throws -> ProcessResult {
        let run = try Completed(executable, arguments, environment: environment, input: input)
        defer { run.remove() }
        try run.process.run()
        return run.result()
    }

    /// Finds `name` on PATH.
    public static func which(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// A child run to completion. Its output goes to files, not pipes: a pipe would need a reader
    /// thread to keep a chatty child from blocking. Its `XDG_DATA_HOME` is a directory of this run
    /// (removed afterwards), so a command's default files (`pair`'s bond file) never reach the user's
    /// data directory or another test.
    private struct Completed {
        let process = Process()
        let directory: URL

        init(_ executable: URL, _ arguments: [String], environment: [String: String], input: URL?) throws {
            process.executableURL = executable
            process.arguments = arguments
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("run-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            process.environment = ProcessInfo.processInfo.environment
                .merging(["XDG_DATA_HOME": directory.appendingPathComponent("data").path]) { $1 }
                .merging(environment) { $1 }
            for name in ["stdout", "stderr"] {
                _ = FileManager.default.createFile(atPath: directory.appendingPathComponent(name).path, contents: nil)
            }
            process.standardOutput = try FileHandle(forWritingTo: directory.appendingPathComponent("stdout"))
            process.standardError = try FileHandle(forWritingTo: directory.appendingPathComponent("stderr"))
            if let input { process.standardInput = try FileHandle(forReadingFrom: input) } else { process.standardInput = FileHandle.nullDevice }
        }

        /// Waits for the exit (at once when the termination handler has run) and reads the output.
        /// Foundation's Process keeps a run-loop source that retains the process until waitUntilExit()
        /// releases it: without this call every Process run here leaks (LeakSanitizer).
        func result() -> ProcessResult {
            process.waitUntilExit()
            func read(_ name: String) -> String {
                (try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)) ?? ""
            }
            return ProcessResult(status: process.terminationStatus, reason: process.terminationReason,
                                 standardOutput: read("stdout"), standardError: read("stderr"))
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }
}
