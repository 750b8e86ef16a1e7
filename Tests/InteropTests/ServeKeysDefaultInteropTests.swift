import Bluewire
import BluewireCore
import Foundation
import PeerTestSupport
import Testing

extension ServeSecurityInteropTests {
    @Test("the default bond file: serve saves a bond there, the next serve takes its address and encrypts without pairing; another --own-address leaves it out, an explicit --keys of it is an error")
    func defaultBondFile() async throws {
        let dbFile = try ServeCommandInteropTests.temporaryFile(Self.database, "protected.json")
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("serve-data-\(UUID().uuidString.prefix(8))")
        defer {
            try? FileManager.default.removeItem(at: dbFile)
            try? FileManager.default.removeItem(at: data)
        }
        let environment = ["XDG_DATA_HOME": data.path]
        let file = data.appendingPathComponent("bluewire/keys.json").path
        let address = newStaticAddress()
        try await withBumblePeer([.tcp], arguments: ["--central", address.hexString, "--manual", "--pairing", "3:1:0"]) { peer in
            let log = EventLog(peer.events.map { PeerJSON(line: $0) })
            let arguments = ["serve", "--db", dbFile.path, "--transport", peer.transports[0], "--io", "no-input-no-output"]
            let first = try PeripheralProcess("bluewire", arguments + ["--own-address", address.hexString], environment: environment)
            defer { first.stop() }
            try await first.first("the advertising line") { $0.hasPrefix("advertising \"") }
            peer.command(0, "connect", ["discover": false])
            try await log.first("bumble's connection") { $0.isCentral(0, "connected") }
            peer.command(0, "pair")
            let paired = try await first.first("the paired line", within: .seconds(30)) { $0.hasPrefix("paired ") || $0.hasPrefix("pairing failed") }
            #expect(paired.contains(", bonded"), "\(paired)")
            let saved = try await first.first("the bond saved") { $0.hasPrefix("bonds saved to ") }
            #expect(saved == "bonds saved to \(file)", "the default file in XDG_DATA_HOME: \(saved)")
            let document = try BondFile.decodeDocument(try String(contentsOfFile: file, encoding: .utf8))
            #expect(document.bonds.count == 1 && document.localAddress?.value == address.value)
            first.send(signal: SIGINT)
            #expect(await first.exitStatus() == 0, "stderr: \(first.standardError)")
            try await log.first("bumble to see the disconnection") { $0.isCentral(0, "disconnected") }

            // No --keys, no --own-address: the default file's address and bond.
            let second = try PeripheralProcess("bluewire", arguments, environment: environment)
            defer { second.stop() }
            let banner = try await second.first("the advertising line") { $0.hasPrefix("advertising \"") }
            #expect(banner.contains(" as \(address) "), "the default bond file's address: \(banner)")
            try await ServeSecurityInteropTests.reconnectEncryptedWithoutPairing(second, peer, log)
            second.send(signal: SIGINT)
            #expect(await second.exitStatus() == 0, "stderr: \(second.standardError)")
            try await log.wait(for: 2, "bumble to see the second disconnection") { $0.isCentral(0, "disconnected") }

            // Another --own-address: the default file is left out (serve runs with that address) and kept as it was.
            let before = try String(contentsOfFile: file, encoding: .utf8)
            let other = newStaticAddress()
            let third = try PeripheralProcess("bluewire", arguments + ["--own-address", other.hexString], environment: environment)
            defer { third.stop() }
            let otherBanner = try await third.first("the advertising line") { $0.hasPrefix("advertising \"") }
            #expect(otherBanner.contains(" as \(other) "), "--own-address kept: \(otherBanner)")
            third.send(signal: SIGINT)
            #expect(await third.exitStatus() == 0, "stderr: \(third.standardError)")
            #expect(try String(contentsOfFile: file, encoding: .utf8) == before)

            // The same file named with --keys: the user asked for it, so the other address is an error.
            let fourth = try PeripheralProcess("bluewire", arguments + ["--own-address", other.hexString, "--keys", file], environment: environment)
            defer { fourth.stop() }
            #expect(await fourth.exitStatus() == 1)
            #expect(fourth.standardError.contains("bond file \(file) holds the bonds of local address"), "stderr: \(fourth.standardError)")
        }
    }
}
