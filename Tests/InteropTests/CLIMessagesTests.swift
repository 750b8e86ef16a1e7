import Foundation
import Testing
import PeerTestSupport

/// What a new user reads first: `--version`, help, and the one-line errors of commands that cannot
/// reach their controller or file. The built `bluewire` binary, as a process; no controller needed.
@Suite("bluewire: version, help and error messages")
struct CLIMessagesTests {
    static func run(_ arguments: [String]) async throws -> ProcessResult {
        try await ProcessRunner.run(try ProcessRunner.bluewire, arguments, timeout: .seconds(20))
    }

    @Test("--version prints the version on one line, status 0")
    func version() async throws {
        let result = try await Self.run(["--version"])
        #expect(result.status == 0)
        #expect(result.outputLines.count == 1 && result.standardOutput.hasPrefix("bluewire "), "\(result.standardOutput)")
        #expect(result.outputLines.first?.split(separator: " ").last?.split(separator: ".").count == 3, "a semantic version")
    }

    /// The help of every option of `throughput`: each states its default at most once (ArgumentParser
    /// appends `(default: …)` to a help text that may already name one).
    @Test("throughput --help states each option's default once")
    func throughputHelpStatesEachDefaultOnce() async throws {
        let result = try await Self.run(["throughput", "--help"])
        #expect(result.status == 0)
        // An option's block: its line `  --name …` and the indented lines that continue it.
        var blocks: [String] = []
        for line in result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("  -") { blocks.append(String(line)) }
            else if line.hasPrefix("      "), !blocks.isEmpty { blocks[blocks.count - 1] += " " + line.trimmingCharacters(in: .whitespaces) }
        }
        #expect(blocks.contains { $0.contains("--duration") && $0.contains("default") }, "\(blocks)")
        for block in blocks {
            let count = block.lowercased().components(separatedBy: "default").count - 1
            #expect(count <= 1, "\(block)")
        }
    }

    @Test("serve --db with a missing file says it cannot open it, like decode")
    func serveMissingDatabase() async throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("bluewire-missing-\(UUID().uuidString.prefix(8)).json").path
        let serve = try await Self.run(["serve", "--db", missing, "--transport", "tcp:127.0.0.1:9"])
        #expect(serve.status == 1)
        #expect(serve.standardError == "bluewire: cannot open \(missing): No such file or directory\n")
        let decode = try await Self.run(["decode", missing])
        #expect(decode.status != 0 && decode.standardError.contains("cannot open \(missing): No such file or directory"))
    }

    @Test("a refused TCP connection names the transport it tried", arguments: [["scan", "--duration", "1"], ["gatt", "read", "C0:11:22:33:44:55/random", "3"]])
    func refusedConnectionNamesTheTransport(_ command: [String]) async throws {
        let port = try ScanFreePort().port
        let result = try await Self.run(command + ["--transport", "tcp:127.0.0.1:\(port)"])
        #expect(result.status == 1)
        #expect(result.standardError == "bluewire: cannot open tcp:127.0.0.1:\(port): connect: Connection refused (errno 111)\n")
    }

    @Test("every command that uses bonds offers --keys with the default in the user's data directory",
          arguments: [["scan"], ["serve"], ["l2cap", "connect"], ["l2cap", "listen"], ["gatt", "read"], ["pair"], ["bonds", "list"]])
    func keysOnEveryLiveCommand(_ command: [String]) async throws {
        let result = try await Self.run(command + ["--help"])
        #expect(result.status == 0)
        let help = result.standardOutput.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        #expect(help.contains("--keys <file>") && help.contains("$XDG_DATA_HOME/bluewire/keys.json"), "\(command) --help: \(result.standardOutput)")
    }

    /// These commands take their bond file's local address when `--own-address` is not given
    /// (`KeyFileIdentity`), so "a new one" alone would be untrue there.
    @Test("--own-address's help names the bond file's local address as the default where a bond file supplies it",
          arguments: [["pair"], ["gatt", "read"], ["l2cap", "connect"], ["serve"]])
    func ownAddressDefaultIsTrue(_ command: [String]) async throws {
        let result = try await Self.run(command + ["--help"])
        #expect(result.status == 0)
        let help = result.standardOutput.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        let option = try #require(help.range(of: "--own-address <address>").map { String(help[$0.lowerBound...].prefix(260)) }, "\(help)")
        #expect(option.contains("bond file's local address"), "\(command): \(option)")
    }

    @Test("serve --throughput refuses --keys, which is for --db")
    func serveThroughputRefusesKeys() async throws {
        let result = try await Self.run(["serve", "--throughput", "--keys", "keys.json", "--transport", "tcp:127.0.0.1:9"])
        #expect(result.status != 0)
        #expect(result.standardError.contains("pairing options and --keys are for --db"), "stderr: \(result.standardError)")
    }

    @Test("a host name that does not resolve is said so, not 'No such file or directory'")
    func unresolvableHost() async throws {
        // .invalid never resolves (RFC 6761 §6.4).
        let result = try await Self.run(["scan", "--duration", "1", "--transport", "tcp:bluewire-test.invalid:9001"])
        #expect(result.status == 1)
        let lines = result.standardError.split(separator: "\n")
        #expect(lines.count == 1, "\(result.standardError)")
        #expect(result.standardError.contains("bluewire-test.invalid"))
        #expect(!result.standardError.contains("No such file or directory"), "\(result.standardError)")
    }
}
