import Foundation

/// The repository's Captures/ directory.
public enum ReplayFixtures {
    public static let captures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Captures")
}
