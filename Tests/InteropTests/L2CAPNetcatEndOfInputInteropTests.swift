import Foundation
import PeerTestSupport
import Testing

/// `bluewire l2cap connect` at end of input, on bumble's link: everything read goes out before
/// the channel closes (the Disconnection Request follows the last K-frame, Core Vol 3 Part A §4.6),
/// and by default the command goes on printing what arrives, as netcat does.
@Suite("bluewire l2cap connect: end of input", .serialized)
struct L2CAPNetcatEndOfInputInteropTests {
    /// 262,144 octets: 512 SDUs of 512 octets when read 512 at a time.
    static let payload = Data((0..<262_144).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) })

    /// The issue's repro on bumble: one 192-octet ACL buffer (btvirt's) whose completions come 5 ms late, the kernel's MPS
    /// 188 and 3 credits. Before the fix the Disconnection Request overtook the last SDU's K-frames
    /// (261,632 of 262,144 octets recorded, exit 0).
    @Test("a 262,144-octet file piped in with --close-on-eof: bumble records every octet, exit 0")
    func everyOctetArrives() async throws {
        let record = FileManager.default.temporaryDirectory.appendingPathComponent("nc-eof-\(UUID().uuidString.prefix(8)).bin")
        defer { try? FileManager.default.removeItem(at: record) }
        try await withBumblePeer([.tcp], arguments: [
            "--peripheral", "--psm", "0x80", "--mtu", "512", "--mps", "188", "--credits", "3", "--record", record.path,
            "--acl-length", "192", "--acl-buffers", "1", "--completion-delay", "5",
        ], script: "bumble_coc.py") { peer in
            let events = L2CAPNetcatInteropTests.Events(peer)
            let address = try #require(peer.ready.device?.address) + "/random"
            let connect = try PeripheralProcess("bluewire", [
                "l2cap", "connect", address, "0x80", "--close-on-eof", "--transport", peer.transports[0],
            ], input: true)
            defer { connect.stop() }
            connect.pipe(Self.payload)
            #expect(await connect.exitStatus(within: .seconds(120)) == 0, "stderr: \(connect.standardError)")
            #expect(await events.wait(for: #""octets": 262144}"#), "bumble recorded every octet")
            let received = try L2CAPNetcatInteropTests.frames(record).flatMap { $0 }
            #expect(received.count == Self.payload.count, "octets received: \(received.count) of \(Self.payload.count)")
            #expect(Data(received) == Self.payload)
        }
    }

    /// Two CLI processes on one bumble link: `l2cap listen --echo` and `l2cap connect` fed "hello".
    static func withListener(_ body: (PeripheralProcess, String, String) async throws -> Void) async throws {
        let own = "C4:5A:17:00:CC:07"
        try await withBumblePeer([.tcp, .tcp], arguments: []) { peer in
            let listener = try PeripheralProcess("bluewire", [
                "l2cap", "listen", "0x80", "--echo", "--json", "--name", "bw-echo", "--own-address", own,
                "--transport", peer.transports[1],
            ])
            defer { listener.stop() }
            try await listener.first("listening") { $0.contains(#""event":"listening""#) }
            try await body(listener, own + "/random", peer.transports[0])
        }
    }

    @Test("echo hello | l2cap connect ADDR 0x80 against l2cap listen --echo prints hello and keeps reading after end of input")
    func echoComesBackAfterEndOfInput() async throws {
        try await Self.withListener { listener, address, transport in
            let connect = try PeripheralProcess("bluewire", ["l2cap", "connect", address, "0x80", "--transport", transport], input: true)
            defer { connect.stop() }
            connect.write(line: "hello")
            connect.closeInput()
            try await connect.first("the echo", within: .seconds(30)) { $0 == "hello" }
            // Netcat's default: the end of input does not end the command; the peer (or the user) does.
            try await Task.sleep(for: .seconds(1))
            connect.send(signal: SIGINT)
            #expect(await connect.exitStatus() == 130, "stderr: \(connect.standardError)")
        }
    }

    @Test("--quit-after 1: prints the echo, then closes the channel and exits 0 by itself")
    func quitAfter() async throws {
        try await Self.withListener { listener, address, transport in
            let connect = try PeripheralProcess("bluewire", [
                "l2cap", "connect", address, "--psm", "0x80", "--quit-after", "1", "--transport", transport,
            ], input: true)
            defer { connect.stop() }
            connect.write(line: "hello")
            connect.closeInput()
            try await connect.first("the echo", within: .seconds(30)) { $0 == "hello" }
            #expect(await connect.exitStatus(within: .seconds(30)) == 0, "stderr: \(connect.standardError)")
            // The listener served its one channel: closed by the central, it ends with status 0.
            #expect(await listener.exitStatus(within: .seconds(30)) == 0, "stderr: \(listener.standardError)")
            #expect(await listener.lines.events.contains { $0.contains(#""event":"closed""#) && $0.contains("closed by the peer") })
        }
    }
}
