import ArgumentParser
import Glibc
import Synchronization

/// The one way out of the process.
///
/// A command can end on two threads at once: its own path (`fail`, status 1, or the end of `main`)
/// and a signal handler's (SIGINT/SIGTERM: release the controller, status 130). Two concurrent
/// `exit()` calls run the atexit handlers and static destructors twice, concurrently (ThreadSanitizer
/// caught `exit(1)` from a failing `gatt` command racing `exit(130)` from SIGINT's handler). Every
/// exit of the CLI goes through here: the first caller's status stands, a later caller's thread
/// waits for the process to end.
enum ProcessExit {
    private static let claimed = Atomic<Bool>(false)

    static func exit(_ status: Int32) -> Never {
        if claimed.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged {
            Glibc.exit(status)
        }
        while true { pause() }
    }

    /// `ParsableCommand.exit(withError:)` through the one exit: the message (help and version on
    /// stdout, errors on stderr) and the error's status.
    static func exit(withError error: any Error) -> Never {
        let message = BluewireCommand.fullMessage(for: error)
        let code = BluewireCommand.exitCode(for: error)
        if !message.isEmpty {
            let line = Array((message + "\n").utf8)
            line.withUnsafeBytes { _ = Glibc.write(code == .success ? 1 : 2, $0.baseAddress, $0.count) }
        }
        exit(code.rawValue)
    }
}

extension BluewireCommand {
    /// ArgumentParser's `main`, with every exit through `ProcessExit` (also the successful end, which a
    /// signal handler's exit could otherwise race).
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch {
            ProcessExit.exit(withError: error)
        }
        ProcessExit.exit(0)
    }
}
