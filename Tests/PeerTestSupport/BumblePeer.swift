import Foundation
import Synchronization
import Testing

/// A running `Tests/Peers/bumble_link.py`: bumble controllers on one LocalLink, plus optionally a
/// bumble Device (peripheral or central). Shared by the transport, host and interop test targets.
///
/// ```swift
/// try await withBumblePeer([.tcp]) { peer in
///     let transport = try await TransportSpec(parsing: peer.transports[0]).open()
///     ...
/// }
/// ```
/// Every call starts a fresh link (bumble's controller keeps state across Reset) on a free port /
/// fresh path, waits for its READY line, and stops it afterwards, even when the body throws.
public final class BumblePeer {
    /// How one controller listens for its host.
    public enum ControllerTransport: Sendable {
        case tcp, unix, pty
    }

    public struct Ready: Decodable, Sendable {
        public struct Controller: Decodable, Sendable {
            /// Spelled as Bluewire's `--transport` takes it: `tcp:127.0.0.1:PORT`, `unix:PATH`, `serial:PATH`.
            public var transport: String
            public var address: String
        }
        public struct Device: Decodable, Sendable {
            public var role: String
            public var address: String
        }
        public var controllers: [Controller]
        public var device: Device?
        /// With `--centrals N`: every central's address, central 0 first.
        public var centrals: [String]?
    }

    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    public let ready: Ready
    /// `EVENT` lines after READY, as their JSON text.
    public let events: AsyncStream<String>
    private let child: ChildProcess
    private let directory: URL

    /// The controllers' transports, in argument order, as `--transport` strings.
    public var transports: [String] { ready.controllers.map(\.transport) }

    /// The package root (this file is Tests/PeerTestSupport/BumblePeer.swift).
    public static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    public static var python: URL {
        if let path = ProcessInfo.processInfo.environment["BLUEWIRE_PYTHON"] { return URL(fileURLWithPath: path) }
        return repositoryRoot.appendingPathComponent(".venv/bin/python")
    }

    /// Starts the script with one controller per entry of `controllers` and the extra `arguments`
    /// (`--peripheral --name X`, `--central ADDR`, `--legacy-reports`, ...). `script` names another
    /// script of Tests/Peers that speaks the same READY/EVENT protocol (bumble_coc.py).
    public static func start(
        _ controllers: [ControllerTransport], arguments: [String] = [], script: String = "bumble_link.py",
        timeout: Duration = .seconds(30)
    ) async throws -> BumblePeer {
        // Outside a test (a benchmark, a tool) there is nothing to cancel: say what is missing.
        if Test.current != nil { try PeerRequirement.requireBumble() }
        guard PeerRequirement.hasBumble else {
            throw StartError(description: "\(python.path) missing: run scripts/setup-test-env.sh first")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bumble-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let specs = controllers.enumerated().map { index, kind in
            switch kind {
            case .tcp: "tcp-server:127.0.0.1:0"
            case .unix: "unix-server:\(directory.path)/c\(index).sock"
            case .pty: "pty:\(directory.path)/tty\(index)"
            }
        }
        let errorLog = directory.appendingPathComponent("stderr.log")
        let child = try ChildProcess(
            python, [repositoryRoot.appendingPathComponent("Tests/Peers/\(script)").path] + specs + arguments,
            input: true, errorLog: errorLog)

        // READY goes to the wait below, EVENT lines to `events`.
        let (readyLines, readyContinuation) = AsyncStream<String>.makeStream()
        let (events, eventContinuation) = AsyncStream<String>.makeStream()
        let lines = child.lines
        Task {
            for await line in lines {
                if line.hasPrefix("READY ") { readyContinuation.yield(String(line.dropFirst(6))) }
                if line.hasPrefix("EVENT ") { eventContinuation.yield(String(line.dropFirst(6))) }
            }
            readyContinuation.finish()
            eventContinuation.finish()
        }
        // A peer that never gets ready is killed, which ends its output and so the wait below.
        let pid = child.processIdentifier
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            kill(pid, SIGTERM)
        }
        var readyIterator = readyLines.makeAsyncIterator()
        let readyLine = await readyIterator.next()
        watchdog.cancel()
        guard let readyLine else {
            child.stop()
            let log = child.standardError
            try? FileManager.default.removeItem(at: directory)
            throw StartError(description: "\(script) gave no READY line within \(timeout):\n\(log)")
        }
        let ready = try JSONDecoder().decode(Ready.self, from: Data(readyLine.utf8))
        return BumblePeer(ready: ready, events: events, child: child, directory: directory)
    }

    private init(ready: Ready, events: AsyncStream<String>, child: ChildProcess, directory: URL) {
        self.ready = ready
        self.events = events
        self.child = child
        self.directory = directory
    }

    /// The script's process ID (for a watchdog that must not hold the peer itself).
    public var processIdentifier: Int32 { child.processIdentifier }

    /// Writes one line to the script's standard input (the centrals' JSON commands).
    public func send(line: String) {
        child.write(line: line)
    }

    /// Stops the script (SIGTERM, then SIGKILL if it has not exited within `grace`) and removes its
    /// temporary files. Never waits unbounded: a script stuck in its own shutdown must not hang the run.
    public func stop(grace: Duration = .seconds(10)) {
        // Closing its standard input alone makes the script exit; SIGTERM as well in case it is busy.
        child.stop(grace: grace)
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }
}

/// Runs `body` with a fresh bumble link and always stops it afterwards.
///
/// `deadline` bounds the whole session: past it the peer is killed (its sockets close, as when a real
/// peer vanishes), so a test waiting on it unwinds through the host's own transport-ended path instead
/// of hanging the test run, and the session then fails with `SessionDeadlineExceeded` whatever the
/// body returned.
public func withBumblePeer<R>(
    _ controllers: [BumblePeer.ControllerTransport] = [.tcp], arguments: [String] = [], script: String = "bumble_link.py",
    deadline: Duration = .seconds(300),
    _ body: (BumblePeer) async throws -> R
) async throws -> R {
    let peer = try await BumblePeer.start(controllers, arguments: arguments, script: script)
    defer { peer.stop() }
    let expired = ExpiryFlag()
    let pid = peer.processIdentifier
    let watchdog = Task.detached {
        do { try await Task.sleep(for: deadline) } catch { return }
        expired.value.withLock { $0 = true }
        FileHandle.standardError.write(Data("bumble session (\(([script] + arguments).joined(separator: " "))) still running after \(deadline): killing the peer\n".utf8))
        kill(pid, SIGKILL)
    }
    defer { watchdog.cancel() }
    let result: R
    do {
        result = try await body(peer)
    } catch {
        if expired.value.withLock({ $0 }) { throw SessionDeadlineExceeded(deadline: deadline, script: script, underlying: error) }
        throw error
    }
    if expired.value.withLock({ $0 }) { throw SessionDeadlineExceeded(deadline: deadline, script: script, underlying: nil) }
    return result
}

private final class ExpiryFlag: Sendable {
    let value = Mutex(false)
}

/// A `withBumblePeer` session outlived its deadline and its peer was killed.
public struct SessionDeadlineExceeded: Error, CustomStringConvertible {
    public var deadline: Duration
    public var script: String
    public var underlying: (any Error)?
    public var description: String {
        "the \(script) session exceeded its \(deadline) deadline; the peer was killed"
            + (underlying.map { " (the test then failed with: \($0))" } ?? "")
    }
}
