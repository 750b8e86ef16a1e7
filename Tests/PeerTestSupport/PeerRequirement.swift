import Foundation
import Testing

/// What a real-peer test needs from the machine, and how it gets out of the way when that is missing.
///
/// `swift build && swift test` on a fresh clone must pass: a test that needs bumble (the repository's
/// `.venv`, made by `scripts/setup-test-env.sh`) is cancelled with its reason, which the test run
/// prints, instead of failing. `scripts/test.sh` installs every peer, so there they all run.
public enum PeerRequirement {
    /// The reason printed for a test cancelled because bumble is not installed.
    public static let bumbleMissingReason =
        "needs bumble: run scripts/setup-test-env.sh (makes .venv with bumble), or set BLUEWIRE_PYTHON"

    /// Whether the Python that runs the bumble peers is there.
    public static var hasBumble: Bool {
        FileManager.default.isExecutableFile(atPath: BumblePeer.python.path)
    }

    /// Cancels the running test, with the reason shown, when bumble is not installed.
    public static func requireBumble(sourceLocation: SourceLocation = #_sourceLocation) throws {
        guard hasBumble else { try Test.cancel(Comment(rawValue: bumbleMissingReason), sourceLocation: sourceLocation) }
    }
}
