import Foundation
import PeerTestSupport
import Testing

/// Every Swift snippet of README.md and of the `Bluewire` DocC articles (Sources/Bluewire/Bluewire.docc),
/// type-checked by `swiftc` against the package's built modules as a user's `main.swift` would be:
/// the code is taken from the documents themselves, so a snippet that stops compiling (an API
/// change, a typo, a `return` outside a function) fails here, whatever the package's own tests use.
///
/// How snippets become programs (DocumentationSnippetSource):
/// - README: each snippet is a program of its own.
/// - an article: its snippets, in order, are one program (they build on each other); a snippet that
///   starts with `import` starts a new one.
/// - `import Bluewire` is added when a program does not have it (what "add the package" means).
/// - a program with `@Test` is a test file, not a `main.swift`: it is checked as a library file.
///
/// The compiler and its flags (module and header search paths, the module maps of the C modules)
/// are the ones SwiftPM used for this test target, read from the build's llbuild manifest, so the
/// check follows the build wherever its scratch path is.
@Suite("Documentation: every snippet compiles as a main.swift")
struct DocumentationCompileTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func documents() throws -> [URL] {
        let catalog = root.appendingPathComponent("Sources/Bluewire/Bluewire.docc")
        let articles = try FileManager.default.contentsOfDirectory(atPath: catalog.path).filter { $0.hasSuffix(".md") }.sorted()
        return [root.appendingPathComponent("README.md")] + articles.map { catalog.appendingPathComponent($0) }
    }

    static func programs() throws -> [DocumentationProgram] {
        try documents().flatMap { url in
            DocumentationSnippetSource.programs(in: try String(contentsOf: url, encoding: .utf8),
                                                document: url.lastPathComponent, eachSnippetAlone: url.lastPathComponent == "README.md")
        }
    }

    @Test("the documents hold the snippets this check expects (README 2+, every article 1+)")
    func snippetsAreFound() throws {
        let programs = try Self.programs()
        #expect(programs.filter { $0.document == "README.md" }.count >= 2, "\(programs.map(\.name))")
        for article in ["GettingStarted.md", "ServingADatabase.md", "ReplayingACapture.md", "MeasuringThroughput.md"] {
            #expect(programs.contains { $0.document == article }, "no snippet found in \(article)")
        }
        // The central of GettingStarted and the peripheral of ServingADatabase talk to each other:
        // one Health Thermometer service, the two controllers of one `controller.sh` call.
        let central = try #require(programs.first { $0.document == "GettingStarted.md" }).source
        let peripheral = try #require(programs.first { $0.document == "ServingADatabase.md" }).source
        #expect(central.contains("BluetoothUUID(0x1809)") && peripheral.contains("BluetoothUUID(0x1809)"), "one service")
        for uuid in ["0x2A1C", "0x2A21"] {
            #expect(central.contains("BluetoothUUID(\(uuid))") && peripheral.contains("BluetoothUUID(\(uuid))"), "characteristic \(uuid)")
        }
        #expect(peripheral.contains("\"tcp:127.0.0.1:9001\"") && central.contains("\"tcp:127.0.0.1:9002\""), "two ports")
    }

    @Test("each documentation program type-checks with swiftc against the built modules",
          arguments: try! DocumentationCompileTests.programs())
    func programCompiles(_ program: DocumentationProgram) throws {
        let compiler = try BuiltModules.compiler()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluewire-doc-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent(program.isTestFile ? "DocumentationTest.swift" : "main.swift")
        try program.source.write(to: file, atomically: true, encoding: .utf8)
        let result = try compiler.typecheck(file, parseAsLibrary: program.isTestFile)
        let errors = result.output.split(separator: "\n").filter { $0.contains("error:") }
        #expect(result.status == 0 && errors.isEmpty,
                "\(program.name) does not compile:\n\(result.output)\n--- the program:\n\(program.numberedSource)")
    }
}

/// One program made of documentation snippets.
struct DocumentationProgram: CustomTestStringConvertible, Sendable {
    var document: String
    /// Which snippets (1-based, in document order) it is made of.
    var snippets: [Int]
    var source: String

    var name: String { "\(document) snippet\(snippets.count == 1 ? "" : "s") \(snippets.map(String.init).joined(separator: ", "))" }
    var testDescription: String { name }
    var isTestFile: Bool { source.contains("@Test") }
    var numberedSource: String {
        source.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            .map { "\(String($0.offset + 1).leftPadded(3)) \($0.element)" }.joined(separator: "\n")
    }
}

enum DocumentationSnippetSource {
    /// The fenced ```swift blocks of a Markdown text, in order.
    static func snippets(in text: String) -> [String] {
        var snippets: [String] = []
        var current: [Substring]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current == nil, trimmed == "```swift" {
                current = []
            } else if current != nil, trimmed == "```" {
                snippets.append(current!.joined(separator: "\n"))
                current = nil
            } else if current != nil {
                current!.append(line)
            }
        }
        return snippets
    }

    static func startsWithImport(_ snippet: String) -> Bool {
        let first = snippet.split(separator: "\n").first { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        return first?.trimmingCharacters(in: .whitespaces).hasPrefix("import ") == true
    }

    static func programs(in text: String, document: String, eachSnippetAlone: Bool) -> [DocumentationProgram] {
        var programs: [DocumentationProgram] = []
        for (index, snippet) in snippets(in: text).enumerated() {
            if eachSnippetAlone || programs.isEmpty || startsWithImport(snippet) {
                programs.append(DocumentationProgram(document: document, snippets: [index + 1], source: snippet))
            } else {
                programs[programs.count - 1].snippets.append(index + 1)
                programs[programs.count - 1].source += "\n" + snippet
            }
        }
        for index in programs.indices {
            let imports = programs[index].source.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            if !imports.contains(where: { $0 == "import Bluewire" || $0.hasPrefix("import Bluewire ") || $0.hasPrefix("import Bluewire/") }) {
                programs[index].source = "import Bluewire\n" + programs[index].source
            }
            programs[index].source += "\n"
        }
        return programs
    }
}

/// The compiler SwiftPM built this package with, and the flags that find its modules.
struct BuiltModules {
    var swiftc: String
    var flags: [String]

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The llbuild manifest (`.build/debug.yaml`) beside the build directory that holds this test
    /// bundle, and in it the command that compiled this test target (which imports Bluewire and
    /// BluewireTesting, so its search paths find everything a snippet imports).
    static func compiler() throws -> BuiltModules {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        var manifest: URL?
        for _ in 0..<5 {
            for name in ["debug.yaml", "release.yaml"] {
                let candidate = directory.appendingPathComponent(name)
                if FileManager.default.fileExists(atPath: candidate.path) { manifest = candidate; break }
            }
            if manifest != nil { break }
            directory = directory.deletingLastPathComponent()
        }
        guard let manifest else { throw Failure(description: "no llbuild manifest (debug.yaml) above \(executable.path)") }
        let text = try String(contentsOf: manifest, encoding: .utf8)
        guard let line = text.split(separator: "\n").first(where: {
            $0.contains(#""-module-name","BluewireHostTests""#) && $0.contains("args: [")
        }) else { throw Failure(description: "\(manifest.path) has no command compiling BluewireHostTests") }
        let json = line[line.range(of: "args: ")!.upperBound...]
        guard let arguments = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String] else {
            throw Failure(description: "unreadable arguments in \(manifest.path)")
        }
        // Search paths, C module maps, the target and language mode; nothing that names the test
        // target's own sources or outputs.
        var flags: [String] = []
        var index = 1
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "-I", "-target", "-swift-version", "-module-cache-path", "-sdk", "-resource-dir":
                if index + 1 < arguments.count { flags += [argument, arguments[index + 1]] }
                index += 2
            case "-Xcc":
                if index + 1 < arguments.count { flags += [argument, arguments[index + 1]] }
                index += 2
            default:
                if argument.hasPrefix("-F") || argument.hasPrefix("-D") { flags.append(argument) }
                index += 1
            }
        }
        return BuiltModules(swiftc: arguments[0], flags: flags)
    }

    func typecheck(_ file: URL, parseAsLibrary: Bool) throws -> (status: Int32, output: String) {
        let run = try ChildProcess.runBlocking(
            URL(fileURLWithPath: swiftc), ["-typecheck"] + flags + (parseAsLibrary ? ["-parse-as-library"] : []) + [file.path])
        return (run.status, run.standardOutput + run.standardError)
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
