import Foundation
import Testing

/// Docs/Testing.md's numbered list of what `scripts/test.sh` runs, held against the script itself:
/// the same steps in the same order, and the same test targets in the peer run.
@Suite("Docs/Testing.md: the steps of scripts/test.sh")
struct TestingStepsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// One key per step of the script, in order: the script a line runs, `swift build`, DocC, and the
    /// two test runs (`run_tests`, `run_tests_side_by_side`). Lines inside functions (indented) are not steps.
    static func scriptSteps(_ text: String) -> [String] {
        var steps: [String] = []
        for line in text.split(separator: "\n").map(String.init) where !line.hasPrefix(" ") && !line.hasPrefix("#") {
            if let range = line.range(of: #"scripts/[A-Za-z0-9/_-]+\.sh"#, options: .regularExpression), line.contains("bash ") {
                steps.append(String(line[range]))
            } else if line.hasPrefix("swift build") {
                steps.append("swift build")
            } else if line.hasPrefix("swift package"), line.contains("generate-documentation") {
                steps.append("generate-documentation")
            } else if line.hasPrefix("run_tests ") || line.hasPrefix("run_tests_side_by_side ") {
                steps.append("tests " + line.split(separator: " ")[1])
            }
        }
        return steps
    }

    /// The same keys from the list under "The whole suite": each item's first code span, or which
    /// test run it describes.
    static func documentedSteps(_ text: String) -> [String] {
        guard let start = text.range(of: "## The whole suite"), let end = text.range(of: "\n## ", range: start.upperBound..<text.endIndex)
        else { return [] }
        var steps: [String] = []
        for line in text[start.upperBound..<end.lowerBound].split(separator: "\n").map(String.init) {
            guard let dot = line.firstIndex(of: "."), !line[..<dot].isEmpty, line[..<dot].allSatisfy(\.isNumber) else { continue }
            let item = String(line[line.index(after: dot)...]).trimmingCharacters(in: .whitespaces)
            if item.hasPrefix("The unit and capture tests") {
                steps.append("tests units")
            } else if item.hasPrefix("The peer tests") {
                steps.append("tests peers")
            } else if let code = item.range(of: #"^`[^`]+`"#, options: .regularExpression) {
                let span = item[code].dropFirst().dropLast()
                steps.append(span.hasPrefix("swift build") ? "swift build"
                    : span.contains("generate-documentation") ? "generate-documentation" : String(span.split(separator: " ")[0]))
            } else {
                steps.append("? " + item)
            }
        }
        return steps
    }

    /// The peer tests' targets, one a line in scripts/peer-suites.txt, which both scripts/test.sh and
    /// scripts/sanitizers.sh read, so the two cannot run different peer lists.
    static func peerSuites() throws -> [String] {
        let text = try String(contentsOf: root.appendingPathComponent("scripts/peer-suites.txt"), encoding: .utf8)
        return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty }
    }

    @Test("scripts/peer-suites.txt names test targets, and both scripts read the list from it")
    func peerSuitesShared() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("scripts/peer-suites.txt"), encoding: .utf8)
        // A blank line would join into an empty alternative of the --filter/--skip regex, which matches
        // every test: the scripts refuse such a file, and so does this test.
        #expect(text.hasSuffix("\n") && !text.hasSuffix("\n\n") && !text.hasPrefix("\n"))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(!lines.isEmpty)
        for line in lines {
            #expect(!line.isEmpty && line.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }, "not a test target name: \(line)")
            // Each is a test target (a directory under Tests/) or a suite inside one.
            let directory = Self.root.appendingPathComponent("Tests/\(line)")
            let named = FileManager.default.fileExists(atPath: directory.path)
                || Self.testSources().contains { $0.contains("struct \(line) ") || $0.contains("struct \(line){") }
            #expect(named, "\(line): no test target or suite of that name")
        }
        for script in ["scripts/test.sh", "scripts/sanitizers.sh"] {
            let body = try String(contentsOf: Self.root.appendingPathComponent(script), encoding: .utf8)
            let assignments = body.split(separator: "\n").filter { $0.hasPrefix("peers=") }
            #expect(assignments == ["peers=$(paste -sd'|' scripts/peer-suites.txt)"], "\(script): \(assignments)")
        }
    }

    /// Every Swift source under Tests/.
    static func testSources() -> [String] {
        guard let files = FileManager.default.enumerator(at: root.appendingPathComponent("Tests"), includingPropertiesForKeys: nil)
        else { return [] }
        return files.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
            .compactMap { try? String(contentsOf: $0, encoding: .utf8) }
    }

    @Test("Testing.md lists scripts/test.sh's steps in order, and the peer run's test targets")
    func stepsMatch() throws {
        let script = try String(contentsOf: Self.root.appendingPathComponent("scripts/test.sh"), encoding: .utf8)
        let document = try String(contentsOf: Self.root.appendingPathComponent("Docs/Testing.md"), encoding: .utf8)
        let steps = Self.scriptSteps(script)
        #expect(steps.count >= 10, "\(steps)")
        #expect(Self.documentedSteps(document) == steps)

        // The peer run's targets (scripts/peer-suites.txt): each named in both list items about test runs.
        let targets = try Self.peerSuites()
        #expect(targets.count >= 3)
        for item in ["The unit and capture tests", "The peer tests"] {
            let start = try #require(document.range(of: item))
            let text = document[start.lowerBound...].prefix(400)
            let paragraph = text[..<(text.range(of: "\n\\d+\\. ", options: .regularExpression)?.lowerBound ?? text.endIndex)]
            for target in targets {
                #expect(paragraph.contains("`\(target)`"), "\(item): \(target) missing")
            }
        }
    }
}
