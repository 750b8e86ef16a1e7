import Foundation
import PeerTestSupport
import Testing

/// What the shipped `bluewire` executable is made of: the replay machinery (`BluewireReplay`) and no test
/// code. `BluewireTesting` holds the virtual controller, the virtual link and the embedded engine harness;
/// before replay moved into its own module the CLI imported `BluewireTesting` for `ReplayTransport` and
/// linked all of it.
@Suite("the bluewire binary links no test code")
struct CLIBinaryContentsTests {
    /// `nm` (binutils), which lists the executable's symbols; absent on a bare machine.
    static let nm: URL? = ["/usr/bin/nm", "/bin/nm"].map(URL.init(fileURLWithPath:))
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }

    /// The Swift module names of the executable's symbols (`$s` + length + name, as the mangling spells them).
    static func modules(in binary: URL, named names: [String]) throws -> [String: Int] {
        let nm = try #require(Self.nm)
        let run = try ChildProcess.runBlocking(nm, [binary.path])
        #expect(run.status == 0, "nm failed")
        let symbols = run.standardOutput
        var counts: [String: Int] = [:]
        for name in names {
            counts[name] = symbols.components(separatedBy: "\(name.utf8.count)\(name)").count - 1
        }
        return counts
    }

    @Test("BluewireReplay is linked; BluewireTesting and the virtual controller are not",
          .enabled(if: nm != nil, "needs nm (binutils) to list the executable's symbols"))
    func noTestCode() throws {
        let binary = try #require(DecodeCommandTests.executable, "the bluewire executable was not built")
        let counts = try Self.modules(in: binary, named: ["BluewireReplay", "BluewireTesting", "VirtualController"])
        #expect(counts["BluewireReplay", default: 0] > 0, "replay should be in the binary: \(counts)")
        #expect(counts["BluewireTesting", default: 0] == 0, "\(counts)")
        #expect(counts["VirtualController", default: 0] == 0, "\(counts)")
    }
}
