import Foundation

/// Where the tests find the `bluewire` executable of this build.
public enum BluewireExecutable {
    /// `$BLUEWIRE_BINARY`, else the executable SwiftPM built next to the test bundle (up to four
    /// directories up from it), else the repository's `.build/debug/bluewire`; nil when none exists.
    public static var url: URL? {
        if let path = ProcessInfo.processInfo.environment["BLUEWIRE_BINARY"] { return URL(fileURLWithPath: path) }
        var directory = URL(fileURLWithPath: CommandLine.arguments.first ?? "").deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("bluewire")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        let build = BumblePeer.repositoryRoot.appendingPathComponent(".build/debug/bluewire")
        return FileManager.default.isExecutableFile(atPath: build.path) ? build : nil
    }
}
