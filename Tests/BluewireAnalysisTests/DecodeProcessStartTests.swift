import Foundation
import PeerTestSupport
import Testing

/// What `bluewire` loads before it decodes a byte. Loading the Swift runtime, Foundation and ICU as
/// shared libraries cost more CPU than a small capture's whole decode (issue 34, item 10): the
/// executable links them statically, so the dynamic loader maps only the C libraries it needs.
@Suite struct DecodeProcessStartTests {
    /// The shared libraries the executable's dynamic section names (DT_NEEDED), as `readelf -d` prints them.
    static func neededLibraries(of executable: URL) throws -> [String]? {
        guard let readelf = ["/usr/bin/readelf", "/bin/readelf"].first(where: FileManager.default.isExecutableFile) else {
            return nil
        }
        let text = try ChildProcess.runBlocking(URL(fileURLWithPath: readelf), ["-d", executable.path]).standardOutput
        // "0x0000000000000001 (NEEDED)             Shared library: [libc.so.6]"
        return text.split(separator: "\n").filter { $0.contains("(NEEDED)") }.compactMap { line in
            guard let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]") else { return nil }
            return String(line[line.index(after: open)..<close])
        }
    }

    @Test(.enabled(if: ["/usr/bin/readelf", "/bin/readelf"].contains(where: FileManager.default.isExecutableFile),
                   "needs readelf (binutils, installed with the Swift toolchain's linker)"),
          .disabled(if: ProcessInfo.processInfo.environment["BLUEWIRE_SANITIZER_BUILD"] == "1",
                    "scripts/sanitizers.sh links the executable with the shared runtime (Package.swift, sanitizerBuild)"))
    func theExecutableLoadsNoSharedSwiftRuntimeOrFoundation() throws {
        let executable = try #require(DecodeCommandTests.executable, "the bluewire executable was not built")
        let needed = try #require(try Self.neededLibraries(of: executable))
        #expect(needed.contains { $0.hasPrefix("libc.so") }, "readelf found no NEEDED entries: \(needed)")
        let swiftLibraries = needed.filter { name in
            ["libswift", "libFoundation", "lib_Foundation", "libdispatch", "libBlocksRuntime"].contains { name.hasPrefix($0) }
        }
        #expect(swiftLibraries.isEmpty, "loaded at start as shared libraries: \(swiftLibraries)")
    }
}
