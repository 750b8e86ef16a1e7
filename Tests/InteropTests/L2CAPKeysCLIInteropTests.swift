import Bluewire
import Foundation
import PeerTestSupport
import Testing

/// `bluewire l2cap connect|listen --keys` against bumble's channels with bumble's Security Manager
/// (Tests/Peers/bumble_coc.py --pairing): a channel refused for security (Insufficient Authentication,
/// Core Vol 3 Part A §4.23) makes `connect` pair and ask again, the bond is saved, and the next run
/// encrypts with it before asking, without pairing; `listen` saves a central's bond and encrypts with
/// it when the central comes back.
@Suite("bluewire l2cap --keys against bumble", .serialized)
struct L2CAPKeysCLIInteropTests {
    typealias Events = L2CAPNetcatInteropTests.Events

    static func count(_ events: Events, _ text: String) -> Int {
        events.lines.mutex.withLock { $0.filter { $0.contains(text) }.count }
    }

    /// Waits until `count` of bumble's lines contain `text`.
    static func wait(_ events: Events, for text: String, count: Int, timeout: Duration = .seconds(15)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if Self.count(events, text) >= count { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("l2cap-keys-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test("connect: refused for security, pairs, opens and saves the bond; the next connect encrypts with it first and is not refused")
    func connectPairsOnRefusalThenEncryptsWithTheBond() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let keys = directory.appendingPathComponent("keys.json").path
        let own = newStaticAddress()
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--psm", "0x80", "--secure", "--pairing", "3:1:0"],
                                 script: "bumble_coc.py") { peer in
            let events = Events(peer)
            let address = try #require(peer.ready.device?.address) + "/random"
            let command = ["l2cap", "connect", address, "0x80", "--json", "--close-on-eof", "--transport", peer.transports[0],
                           "--io", "no-input-no-output", "--keys", keys]

            let first = try PeripheralProcess("bluewire", command + ["--own-address", own.hexString], input: true)
            defer { first.stop() }
            try await first.first("opened", within: .seconds(30)) { $0.contains(#""event":"opened""#) }
            #expect(Self.count(events, #""refusing": 5"#) == 1, "bumble refused the unencrypted link once")
            #expect(await first.lines.events.contains { $0.contains(#""event":"paired""#) && $0.contains(#""level":2"#) })
            first.write(line: "ping")
            try await first.first("the echo") { $0.contains(#""event":"sdu""#) && $0.contains(L2CAPNetcatInteropTests.hex("ping\n")) }
            first.closeInput()
            #expect(await first.exitStatus() == 0, "stderr: \(first.standardError)")
            let document = try BondFile.decodeDocument(try String(contentsOfFile: keys, encoding: .utf8))
            #expect(document.localAddress?.value == own.value, "the file keeps the address the bond was made with")
            #expect(document.bonds.map(\.peer) == [BluetoothAddress(parsing: address)], "the bond with bumble: \(document.bonds)")

            // No --own-address: the file's; the bond encrypts the link before the channel is asked for.
            let pairings = Self.count(events, #""paired""#)
            let second = try PeripheralProcess("bluewire", command, input: true)
            defer { second.stop() }
            try await second.first("opened", within: .seconds(30)) { $0.contains(#""event":"opened""#) }
            let lines = await second.lines.events
            let encrypted = try #require(lines.firstIndex { $0.contains(#""event":"encrypted""#) }, "output: \(lines)")
            let opened = try #require(lines.firstIndex { $0.contains(#""event":"opened""#) })
            #expect(encrypted < opened && lines[encrypted].contains(#""level":2"#))
            #expect(!lines.contains { $0.contains(#""event":"paired""#) }, "no pairing: \(lines)")
            #expect(Self.count(events, #""refusing": 5"#) == 1, "not refused again")
            #expect(Self.count(events, #""paired""#) == pairings)
            second.closeInput()
            #expect(await second.exitStatus() == 0, "stderr: \(second.standardError)")
        }
    }

    @Test("connect refused for security with pairing refused (Numeric Comparison without --yes): exit 1 naming both, nothing saved")
    func connectPairingRefused() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let keys = directory.appendingPathComponent("keys.json").path
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--psm", "0x80", "--secure", "--pairing", "1:1:1"],
                                 script: "bumble_coc.py") { peer in
            let address = try #require(peer.ready.device?.address) + "/random"
            let result = try await ProcessRunner.run(try ProcessRunner.bluewire, [
                "l2cap", "connect", address, "0x80", "--transport", peer.transports[0], "--io", "display-yes-no", "--mitm", "--keys", keys,
            ], timeout: .seconds(40))
            #expect(result.status == 1, "stderr: \(result.standardError)")
            #expect(result.standardError.contains("insufficient authentication") && result.standardError.contains("pairing failed"),
                    "stderr: \(result.standardError)")
            #expect(result.standardError.contains("--yes accepts"), "the comparison prompt says how to answer: \(result.standardError)")
            #expect(!FileManager.default.fileExists(atPath: keys))
        }
    }

    @Test("connect with a bond the peripheral does not have: the encryption fails, exit 1 with the `bonds remove` hint, file unchanged")
    func connectWithALostBond() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let keys = directory.appendingPathComponent("keys.json").path
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--psm", "0x80", "--pairing", "3:1:0"], script: "bumble_coc.py") { peer in
            let address = try #require(peer.ready.device?.address) + "/random"
            let bond = HostBond(peer: try #require(BluetoothAddress(parsing: address)), secureConnections: true, authenticated: false,
                                keySize: 16, longTermKey: [UInt8](repeating: 0x5A, count: 16), localKeys: DistributedKeys(), peerKeys: DistributedKeys())
            let text = BondFile.encode([bond], localAddress: newStaticAddress())
            try text.write(toFile: keys, atomically: true, encoding: .utf8)
            let result = try await ProcessRunner.run(try ProcessRunner.bluewire, [
                "l2cap", "connect", address, "0x80", "--transport", peer.transports[0], "--keys", keys,
            ], timeout: .seconds(40))
            #expect(result.status == 1, "stderr: \(result.standardError)")
            #expect(result.standardError.contains("encrypting with the stored bond") && result.standardError.contains("bluewire bonds remove \(address)"),
                    "stderr: \(result.standardError)")
            #expect(try String(contentsOfFile: keys, encoding: .utf8) == text)
        }
    }

    @Test("listen: a central's pairing is saved; the central comes back and encrypts with the bond, without pairing")
    func listenSavesAndUsesTheBond() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let keys = directory.appendingPathComponent("keys.json").path
        let own = newStaticAddress()
        try await withBumblePeer([.tcp], arguments: ["--central", own.hexString, "--pairing", "3:1:0"], script: "bumble_coc.py") { peer in
            let events = Events(peer)
            let command = ["l2cap", "listen", "0x0080", "--name", "bw-keys", "--echo", "--json", "--transport", peer.transports[0],
                           "--io", "no-input-no-output", "--keys", keys]
            let first = try PeripheralProcess("bluewire", command + ["--own-address", own.hexString])
            defer { first.stop() }
            try await first.first("listening") { $0.contains(#""event":"listening""#) }
            peer.send(line: #"{"op": "connect"}"#)
            #expect(await events.wait(for: #""connected""#), "stderr: \(first.standardError)")
            peer.send(line: #"{"op": "pair"}"#)
            try await first.first("paired", within: .seconds(30)) { $0.contains(#""event":"paired""#) && $0.contains(#""bonded":true"#) }
            peer.send(line: #"{"op": "open", "psm": 128, "mtu": 512, "mps": 100, "credits": 8}"#)
            #expect(await events.wait(for: #""channel_open": 0"#))
            peer.send(line: #"{"op": "close", "channel": 0}"#)
            #expect(await first.exitStatus() == 0, "stderr: \(first.standardError)")
            let document = try BondFile.decodeDocument(try String(contentsOfFile: keys, encoding: .utf8))
            #expect(document.bonds.count == 1 && document.localAddress?.value == own.value)
            #expect(await events.wait(for: #""disconnected""#))

            // The file's address (no --own-address), so bumble finds its key; encryption, no pairing.
            let second = try PeripheralProcess("bluewire", command)
            defer { second.stop() }
            try await second.first("listening") { $0.contains(#""event":"listening""#) && $0.contains(own.hexString) }
            let pairings = Self.count(events, #""paired""#)
            peer.send(line: #"{"op": "connect"}"#)
            #expect(await Self.wait(events, for: #""connected""#, count: 2), "bumble's second connection")
            peer.send(line: #"{"op": "encrypt"}"#)
            try await second.first("encrypted") { $0.contains(#""event":"encrypted""#) && $0.contains(#""level":2"#) }
            #expect(await Self.wait(events, for: #""encryption": 1"#, count: 2), "bumble's second encryption")
            #expect(Self.count(events, #""paired""#) == pairings)
            #expect(await !second.lines.events.contains { $0.contains(#""event":"paired""#) })
            second.send(signal: SIGINT)
            #expect(await second.exitStatus() == 130, "stderr: \(second.standardError)")
        }
    }
}
