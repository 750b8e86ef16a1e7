import Bluewire
import Foundation
import PeerTestSupport
import Testing

/// `bluewire scan --keys`: a bumble peripheral with privacy advertises from a resolvable private address
/// made with a known IRK (Core Vol 6 Part B §1.3.2.2); a bond file holding that IRK names the identity
/// address beside it (Core Vol 3 Part C §10.8.2.3), a file without it does not.
@Suite("bluewire scan --keys, against bumble", .serialized)
struct ScanKeysCLIInteropTests {
    /// bumble's IRK, least significant octet first as SMP and the bond file carry it.
    static let irk: [UInt8] = (0..<16).map { UInt8(0x30 + $0) }
    static let arguments = ["--peripheral", "--name", "bw-private", "--interval", "100", "--privacy",
                            "--irk", irk.map { String(format: "%02x", $0) }.joined()]

    /// A bond file whose one bond gave `irk` and `identity` (and a bond with another IRK before it).
    static func writeBondFile(_ path: String, irk: [UInt8], identity: BluetoothAddress) throws {
        func bond(peer: UInt64, irk: [UInt8], identity: BluetoothAddress) -> HostBond {
            var keys = DistributedKeys()
            keys.identityResolvingKey = irk
            keys.identityAddress = SMPAddress(isRandom: identity.type.isRandom, octets: identity.littleEndianBytes)
            return HostBond(peer: BluetoothAddress(value: peer, type: .random), secureConnections: true, authenticated: false,
                            keySize: 16, longTermKey: [UInt8](repeating: 0x11, count: 16), localKeys: DistributedKeys(), peerKeys: keys)
        }
        let stranger = bond(peer: 0x4A_00_00_00_00_01, irk: [UInt8](repeating: 0x99, count: 16),
                            identity: BluetoothAddress(value: 0xC0_00_00_00_00_99, type: .random))
        let text = BondFile.encode([stranger, bond(peer: 0x4B_00_00_00_00_02, irk: irk, identity: identity)],
                                   localAddress: BluetoothAddress(value: 0xC4_5A_17_00_B1_0E, type: .random))
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    static func objects(_ result: ProcessResult) throws -> [[String: Any]] {
        try result.outputLines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
        }
    }

    @Test("a bond's IRK names the private address's identity in --json and text lines; without it, no identity")
    func bondFileResolvesThePrivateAddress() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("scan-keys-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let bluewire = try ProcessRunner.bluewire
        try await withBumblePeer([.tcp], arguments: Self.arguments) { peer in
            let identityText = try #require(peer.ready.device?.address, "bumble's identity (static) address")
            let identity = try #require(BluetoothAddress(parsing: identityText + "/random"))
            let explicit = directory.appendingPathComponent("explicit.json").path
            try Self.writeBondFile(explicit, irk: Self.irk, identity: identity)
            let scan = ["scan", "--transport", peer.transports[0], "--duration", "1.5", "--name", "bw-private"]

            // --keys FILE, JSON: the private address, and the bonded peer's identity beside it.
            let named = try await ProcessRunner.run(bluewire, scan + ["--json", "--keys", explicit])
            #expect(named.status == 0, "stderr: \(named.standardError)")
            let device = try #require(try Self.objects(named).last, "no device in:\n\(named.standardOutput)")
            let address = try #require((device["address"] as? String).flatMap { BluetoothAddress(parsing: $0) })
            #expect(address.type == .random, "printed with /random: \(device)")
            #expect(address.randomKind == .resolvablePrivate, "bumble advertises from a private address: \(address)")
            #expect(address.value != identity.value)
            #expect(device["identity_address"] as? String == "\(identity)", "device: \(device)")
            #expect(device["identity_address_type"] as? String == "random")
            expectSnakeCaseKeys(device)

            // No file at the default path: no bonds, no identity, and no error.
            let plain = try await ProcessRunner.run(bluewire, scan + ["--json"])
            #expect(plain.status == 0, "stderr: \(plain.standardError)")
            #expect(plain.standardError.isEmpty, "stderr: \(plain.standardError)")
            let unnamed = try #require(try Self.objects(plain).last, "no device in:\n\(plain.standardOutput)")
            #expect(unnamed.keys.contains("identity_address") && unnamed["identity_address"] is NSNull, "device: \(unnamed)")

            // The default file ($XDG_DATA_HOME/bluewire/keys.json), text lines: identity=... after the address.
            let data = directory.appendingPathComponent("data")
            try Self.writeBondFile(data.appendingPathComponent("bluewire/keys.json").path, irk: Self.irk, identity: identity)
            let text = try await ProcessRunner.run(bluewire, scan, environment: ["XDG_DATA_HOME": data.path])
            #expect(text.status == 0, "stderr: \(text.standardError)")
            let line = try #require(text.outputLines.last { $0.contains("bw-private") }, "output:\n\(text.standardOutput)")
            #expect(line.contains("/random identity=\(identity.hexString)/random "), "line: \(line)")

            // Only the bond's own IRK resolves: a file holding another peer's IRK names nothing.
            let other = directory.appendingPathComponent("other.json").path
            try Self.writeBondFile(other, irk: [UInt8](repeating: 0x42, count: 16), identity: identity)
            let stranger = try await ProcessRunner.run(bluewire, scan + ["--json", "--keys", other])
            #expect(stranger.status == 0, "stderr: \(stranger.standardError)")
            let strangerDevice = try #require(try Self.objects(stranger).last, "no device in:\n\(stranger.standardOutput)")
            #expect(strangerDevice["identity_address"] is NSNull, "device: \(strangerDevice)")
        }
    }

    @Test("a damaged --keys file or a missing explicit one ends scan with status 1, naming it, before touching the transport")
    func damagedOrMissingFileIsAnError() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("scan-keys-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let damaged = directory.appendingPathComponent("damaged.json").path
        try "{\"bluewire_bonds\": 1, \"bonds\": [{".write(toFile: damaged, atomically: true, encoding: .utf8)
        let missing = directory.appendingPathComponent("missing.json").path
        let bluewire = try ProcessRunner.bluewire
        // Nothing listens on port 9: reaching the transport would fail with another message.
        for (path, reason) in [(damaged, "damaged"), (missing, "no such file")] {
            let result = try await ProcessRunner.run(bluewire, ["scan", "--transport", "tcp:127.0.0.1:9", "--duration", "1", "--keys", path])
            #expect(result.status == 1, "status \(result.status) for \(path)")
            #expect(result.standardError.contains(path) && result.standardError.contains(reason), "stderr: \(result.standardError)")
            #expect(result.standardOutput.isEmpty)
        }
        #expect(try String(contentsOfFile: damaged, encoding: .utf8) == "{\"bluewire_bonds\": 1, \"bonds\": [{", "left unchanged")
    }
}
