import Bluewire
import Foundation
import PeerTestSupport
import Testing

/// The bond file as a user keeps it: behind a symbolic link (a dotfiles repository), mistaken for a
/// directory, edited by hand. `bonds list|remove` need no controller.
@Suite("bluewire bonds: links, directories and hand-edited files")
struct BondFileCLITests {
    static func directory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bond-file-cli-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func bond(_ value: UInt64) -> HostBond {
        HostBond(peer: BluetoothAddress(value: value, type: .random), secureConnections: true, authenticated: false, keySize: 16,
                 longTermKey: Array(repeating: 0x11, count: 16), localKeys: DistributedKeys(), peerKeys: DistributedKeys())
    }

    @Test("saving through a symlinked --keys writes the link's target and leaves the link a link")
    func symbolicLinkKept() async throws {
        let root = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/dotfiles", withIntermediateDirectories: true)
        let target = root + "/dotfiles/keys.json"
        let local = BluetoothAddress(value: 0xC45A_1700_B10E, type: .random)
        try BondFile.encode([Self.bond(0xF9C3_24B4_A7BE), Self.bond(0xF9C3_24B4_A7BF)], localAddress: local)
            .write(toFile: target, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: root + "/keys.json", withDestinationPath: "dotfiles/keys.json")

        let result = try await ProcessRunner.run(try ProcessRunner.bluewire, [
            "bonds", "remove", "F9:C3:24:B4:A7:BE/random", "--keys", root + "/keys.json",
        ])
        #expect(result.status == 0, "stderr: \(result.standardError)")
        let attributes = try FileManager.default.attributesOfItem(atPath: root + "/keys.json")
        #expect(attributes[.type] as? FileAttributeType == .typeSymbolicLink, "--keys is still a symbolic link")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: root + "/keys.json") == "dotfiles/keys.json")
        let kept = try BondFile.decodeDocument(String(contentsOfFile: target, encoding: .utf8))
        #expect(kept.bonds.map(\.peer.value) == [0xF9C3_24B4_A7BF], "the target holds the bonds left")
        #expect(kept.localAddress == local)
        #expect(try FileManager.default.attributesOfItem(atPath: target)[.posixPermissions] as? Int == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/dotfiles") == ["keys.json"], "no temporary file left")
    }

    @Test("a directory as --keys is an error in words, for every command that reads it",
          arguments: [["bonds", "list"], ["bonds", "remove", "01:02:03:04:05:06"], ["pair", "01:02:03:04:05:06", "--transport", "tcp:127.0.0.1:1"]])
    func directoryInWords(_ command: [String]) async throws {
        let root = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let result = try await ProcessRunner.run(try ProcessRunner.bluewire, command + ["--keys", root])
        #expect(result.status == 1)
        #expect(result.standardError == "bluewire: cannot read bond file \(root): it is a directory, not a file\n", "\(result.standardError)")
        #expect(!result.standardError.contains("NSCocoaErrorDomain") && !result.standardError.contains("error 256"))
    }

    @Test("\"key_size\": \"16\" (a string) is reported as a type error, not as out of range")
    func keySizeStringIsATypeError() async throws {
        let root = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let file = root + "/keys.json"
        let text = #"{"bluewire_bonds": 1, "bonds": [{"peer": "01:02:03:04:05:06", "key_size": "16"}]}"#
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try await ProcessRunner.run(try ProcessRunner.bluewire, ["bonds", "list", "--keys", file])
        #expect(result.status == 1)
        #expect(result.standardError.contains(#"bond 0: "key_size" must be an integer 7-16, not a string"#), "\(result.standardError)")
        #expect(!result.standardError.contains("must be 7-16"), "\(result.standardError)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == text, "the file was left unchanged")
    }
}
