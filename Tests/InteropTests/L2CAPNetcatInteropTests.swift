import Foundation
import PeerTestSupport
import Synchronization
import Testing

/// `bluewire l2cap connect` and `l2cap listen` (netcat over an LE credit based channel) against
/// bumble's channels (Tests/Peers/bumble_coc.py): data piped through both ways, byte-exact.
@Suite("bluewire l2cap connect/listen against bumble", .serialized)
struct L2CAPNetcatInteropTests {
    /// bumble's EVENT lines, kept for waiting on.
    final class Events: Sendable {
        final class Lines: Sendable { let mutex = Mutex<[String]>([]) }
        let lines = Lines()
        let task: Task<Void, Never>
        init(_ peer: BumblePeer) {
            let stream = peer.events, lines = self.lines
            task = Task { for await line in stream { lines.mutex.withLock { $0.append(line) } } }
        }
        deinit { task.cancel() }

        func wait(for text: String, timeout: Duration = .seconds(15)) async -> Bool {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if lines.mutex.withLock({ $0.contains { $0.contains(text) } }) { return true }
                try? await Task.sleep(for: .milliseconds(20))
            }
            return false
        }
    }

    static func hex(_ text: String) -> String { Array(text.utf8).map { String(format: "%02x", $0) }.joined() }

    /// The SDUs bumble recorded: a 4-octet little-endian length before each.
    static func frames(_ url: URL) throws -> [[UInt8]] {
        let data = try [UInt8](Data(contentsOf: url))
        var frames: [[UInt8]] = [], offset = 0
        while offset + 4 <= data.count {
            let length = Int(data[offset]) | Int(data[offset + 1]) << 8 | Int(data[offset + 2]) << 16 | Int(data[offset + 3]) << 24
            frames.append(Array(data[(offset + 4)..<min(offset + 4 + length, data.count)]))
            offset += 4 + length
        }
        return frames
    }

    @Test("connect --lines --close-on-eof: stdin lines arrive as one SDU each, byte-exact; bumble's SDU comes out on stdout; EOF closes, exit 0")
    func connectPipesBothWays() async throws {
        let record = FileManager.default.temporaryDirectory.appendingPathComponent("nc-\(UUID().uuidString.prefix(8)).bin")
        defer { try? FileManager.default.removeItem(at: record) }
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--psm", "0x80", "--record", record.path], script: "bumble_coc.py") { peer in
            let events = Events(peer)
            let address = try #require(peer.ready.device?.address) + "/random"
            let connect = try PeripheralProcess("bluewire", [
                "l2cap", "connect", address, "0x80", "--lines", "--close-on-eof", "--transport", peer.transports[0],
            ], input: true)
            defer { connect.stop() }
            #expect(await events.wait(for: #""channel_open": 0"#), "stderr: \(connect.standardError)")
            peer.send(line: #"{"op": "send", "channel": 0, "data": "\#(Self.hex("hello from bumble\n"))"}"#)
            try await connect.first("bumble's SDU on stdout") { $0 == "hello from bumble" }
            let lines = (0..<60).map { index in "line \(index): " + String(repeating: "abcdefghij", count: index % 9) }
            for line in lines { connect.write(line: line) }
            connect.closeInput()
            #expect(await connect.exitStatus() == 0, "stderr: \(connect.standardError)")
            #expect(await events.wait(for: #""recorded": 60,"#))
            let frames = try Self.frames(record)
            #expect(frames == lines.map { Array(($0 + "\n").utf8) })
        }
    }

    @Test("connect --json: an echoed SDU as a JSON event; bumble closing the channel exits 0")
    func connectJSONPeerCloses() async throws {
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--psm", "0x80"], script: "bumble_coc.py") { peer in
            let events = Events(peer)
            let address = try #require(peer.ready.device?.address) + "/random"
            let connect = try PeripheralProcess("bluewire", [
                "l2cap", "connect", address, "128", "--json", "--mtu", "300", "--transport", peer.transports[0],
            ], input: true)
            defer { connect.stop() }
            try await connect.first("opened") { $0.contains(#""event":"opened""#) && $0.contains(#""peer_mtu":512"#) && $0.contains(#""mtu":300"#) }
            connect.write(line: "ping")
            try await connect.first("the echo") { $0.contains(#""event":"sdu""#) && $0.contains(#""data":"\#(Self.hex("ping\n"))""#) }
            #expect(await events.wait(for: #""channel_open": 0"#))
            peer.send(line: #"{"op": "close", "channel": 0}"#)
            #expect(await connect.exitStatus() == 0, "stderr: \(connect.standardError)")
            #expect(await connect.lines.events.contains { $0.contains(#""event":"closed""#) && $0.contains("closed by the peer") })
        }
    }

    @Test("connect to an SPSM bumble does not serve: exit 1 naming the refusal")
    func connectRefused() async throws {
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--psm", "0x80"], script: "bumble_coc.py") { peer in
            let address = try #require(peer.ready.device?.address) + "/random"
            let result = try await ProcessRunner.run(try ProcessRunner.bluewire, [
                "l2cap", "connect", address, "0x81", "--transport", peer.transports[0],
            ], timeout: .seconds(40))
            #expect(result.status == 1)
            #expect(result.standardError.contains("SPSM not supported"), "stderr: \(result.standardError)")
        }
    }

    @Test("connect: SIGINT disconnects and exits 130; the controller then takes the next connect")
    func connectInterrupted() async throws {
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--psm", "0x80"], script: "bumble_coc.py") { peer in
            let events = Events(peer)
            let address = try #require(peer.ready.device?.address) + "/random"
            let connect = try PeripheralProcess("bluewire", [
                "l2cap", "connect", address, "0x80", "--json", "--transport", peer.transports[0],
            ], input: true)
            defer { connect.stop() }
            try await connect.first("opened") { $0.contains(#""event":"opened""#) }
            connect.send(signal: SIGINT)
            #expect(await connect.exitStatus() == 130, "stderr: \(connect.standardError)")
            #expect(await events.wait(for: #""closed": 0"#), "bumble saw the channel end with the link")
            let again = try PeripheralProcess("bluewire", [
                "l2cap", "connect", address, "0x80", "--json", "--close-on-eof", "--transport", peer.transports[0],
            ], input: true)
            defer { again.stop() }
            try await again.first("opened again") { $0.contains(#""event":"opened""#) }
            again.closeInput()
            #expect(await again.exitStatus() == 0, "stderr: \(again.standardError)")
        }
    }

    @Test("listen: a bumble central's SDUs come out on stdout, stdin goes back byte-exact; its close exits 0")
    func listenPipesBothWays() async throws {
        let own = "C4:5A:17:00:CC:02"
        try await withBumblePeer([.tcp], arguments: ["--central", own], script: "bumble_coc.py") { peer in
            let events = Events(peer)
            let listener = try PeripheralProcess("bluewire", [
                "l2cap", "listen", "0x0080", "--name", "bw-nc", "--own-address", own, "--transport", peer.transports[0],
            ], input: true)
            defer { listener.stop() }
            // Raw mode prints nothing on stdout before data: wait for the advertising bumble connects to.
            peer.send(line: #"{"op": "connect"}"#)
            #expect(await events.wait(for: #""connected""#), "stderr: \(listener.standardError)")
            peer.send(line: #"{"op": "open", "psm": 128, "mtu": 512, "mps": 100, "credits": 8}"#)
            #expect(await events.wait(for: #""channel_open": 0"#))
            let incoming = (0..<5).map { "from bumble \($0) " + String(repeating: "xyz", count: 40 * $0) + "\n" }
            for text in incoming { peer.send(line: #"{"op": "send", "channel": 0, "data": "\#(Self.hex(text))"}"#) }
            for text in incoming {
                let line = String(text.dropLast())
                try await listener.first("SDU \(line.prefix(14))") { $0 == line }
            }
            let outgoing = "to bumble: " + String(repeating: "0123456789", count: 30)
            listener.write(line: outgoing)
            #expect(await events.wait(for: #""sdu": "\#(Self.hex(outgoing + "\n"))""#), "bumble got stdin byte-exact")
            peer.send(line: #"{"op": "close", "channel": 0}"#)
            #expect(await listener.exitStatus() == 0, "stderr: \(listener.standardError)")
            #expect(await events.wait(for: #""disconnected""#), "the listener disconnected the central")
        }
    }
}
