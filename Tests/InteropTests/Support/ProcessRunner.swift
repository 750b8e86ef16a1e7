import Foundation
import Testing
import PeerTestSupport

/// The programs the interop tests run to completion (`ChildProcess.run`), and where they are.
enum ProcessRunner {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The `bluewire` executable of this build (next to the test bundle), or `$BLUEWIRE_BINARY`.
    static var bluewire: URL {
        get throws {
            guard let found = BluewireExecutable.url else {
                throw Failure(description: "no bluewire executable next to the tests: run `swift build` first")
            }
            return found
        }
    }

    /// Finds `name` on PATH.
    static func which(_ name: String) -> URL? { ChildProcess.which(name) }

    /// Runs `executable` with `arguments`; kills it (and fails) after `timeout`. The child's
    /// `XDG_DATA_HOME` is a directory of this run (removed afterwards), so a command's default files
    /// (`pair`'s bond file) never reach the user's data directory or another test; `environment`
    /// adds or replaces variables.
    static func run(
        _ executable: URL, _ arguments: [String], timeout: Duration = .seconds(20), environment: [String: String] = [:]
    ) async throws -> ProcessResult {
        try await ChildProcess.run(executable, arguments, environment: environment, timeout: timeout)
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
