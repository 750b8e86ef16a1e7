import Bluewire
import Foundation
import PeerTestSupport
import Testing

/// The one-host application (Support/PairThenChannelApp.swift, `import Bluewire` only) against
/// `bluewire l2cap listen --echo --db` on bumble's link: the database's value needs an encrypted link
/// (Core Vol 3 Part C §10.3.1), so the first read is refused with Insufficient Encryption; the
/// application's `AutoAuthorizeDecorator` pairs through the Security Manager (Just Works) and reads
/// again, then opens an LE credit based channel on the same connection and gets its SDU back.
@Suite("One host: pair on a refused read, then an L2CAP channel on the same connection (bumble link)", .serialized)
struct PairThenChannelInteropTests {
    static let database = """
        { "services": [ { "uuid": "0xffe0", "characteristics": [
          { "uuid": "0xffe1", "properties": ["read"], "perms": ["read", "read_encrypted"], "value": "5ec2" } ] } ] }
        """

    @Test("refused, paired (Just Works), read; channel opened on the link, SDU echoed")
    func pairThenChannel() async throws {
        let dbFile = try ServeCommandInteropTests.temporaryFile(Self.database, "encrypted.json")
        defer { try? FileManager.default.removeItem(at: dbFile) }
        let address = newStaticAddress()
        try await withBumblePeer([.tcp, .tcp], arguments: []) { peer in
            let listener = try PeripheralProcess("bluewire", [
                "l2cap", "listen", "0x0080", "--echo", "--json", "--db", dbFile.path, "--io", "no-input-no-output",
                "--own-address", address.hexString, "--transport", peer.transports[0],
            ])
            defer { listener.stop() }
            try await listener.first("listening") { $0.contains(#""event":"listening""#) }
            let sdu = (0..<100).map { UInt8(truncatingIfNeeded: $0 * 3) }
            let result = try await PairThenChannelApp.run(
                transport: peer.transports[1], peer: address, value: BluetoothUUID(0xFFE1), psm: SPSM(rawValue: 0x0080), sdu: sdu)
            #expect(result.value == [0x5E, 0xC2])
            #expect(result.level == .encryptedUnauthenticated, "Just Works: encrypted, unauthenticated")
            #expect(result.echo == sdu)
            try await listener.first("the listener's pairing") { $0.contains(#""event":"paired""#) }
            try await listener.first("the channel") { $0.contains(#""event":"opened""#) }
            #expect(await listener.exitStatus() == 0, "stderr: \(listener.standardError)")
        }
    }
}
