import Foundation
import PeerTestSupport
import Testing

/// A controller that misbehaves during bring-up: the command's one-line error names what the
/// controller did (closed its stream, sent an unknown H4 packet type or a packet cut short) and the
/// bring-up command it left unanswered, not "notRunning". The controller is a scripted TCP stream
/// (`ScriptedStreamServer`), a fake on purpose: neither bumble's controller nor the kernel's btvirt
/// can be made to send garbage or hang up in the middle of bring-up.
@Suite("bluewire: bring-up errors name what the controller did")
struct CLIBringUpErrorTests {
    /// Reset's Command Complete, status success (Core Vol 4 Part E §7.7.14).
    static let resetComplete: [UInt8] = [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]

    static func run(_ bytes: [UInt8], command: [String] = ["scan", "--duration", "1"]) async throws -> ProcessResult {
        let server = try ScriptedStreamServer(.sendThenClose(bytes))
        defer { server.stop() }
        return try await ProcessRunner.run(
            try ProcessRunner.bluewire, command + ["--transport", server.transport], timeout: .seconds(30))
    }

    @Test("the controller hangs up at once: the end of its stream is named, with Reset unanswered")
    func endOfFile() async throws {
        let result = try await Self.run([])
        #expect(result.status == 1)
        // A hang-up before our Reset arrived is an end of file; after it (unread), TCP resets the
        // connection. Either way the message says the controller went, and what it left unanswered.
        let stderr = result.standardError
        #expect(stderr.contains("controller bring-up failed: the controller closed its stream (end of file)")
                    || stderr.contains("controller bring-up failed: the controller's transport failed: read: Connection reset by peer"),
                "stderr: \(stderr)")
        #expect(stderr.contains("while Reset (0x0c03) was unanswered"), "stderr: \(stderr)")
        #expect(!stderr.contains("notRunning"))
    }

    @Test("an unknown H4 packet type: named with its value, and the command left unanswered")
    func unknownPacketType() async throws {
        let result = try await Self.run([0x07, 0xDE, 0xAD, 0xBE, 0xEF])
        #expect(result.status == 1)
        #expect(result.standardError.contains("unknown H4 packet type 0x07 at stream offset 0"), "stderr: \(result.standardError)")
        #expect(result.standardError.contains("while Reset (0x0c03) was unanswered"), "stderr: \(result.standardError)")
        #expect(!result.standardError.contains("notRunning"))
    }

    @Test("text instead of HCI after Reset's answer: the garbage is named, and the command unanswered is the one after Reset", arguments: [["scan", "--duration", "1"], ["gatt", "read", "C0:11:22:33:44:55/random", "3"]])
    func garbageAfterReset(_ command: [String]) async throws {
        let result = try await Self.run(Self.resetComplete + Array("HTTP/1.1 400 Bad Request\r\n".utf8), command: command)
        #expect(result.status == 1)
        // 'H' (0x48) is no H4 packet type; it starts right after Reset's 7-octet Command Complete.
        #expect(result.standardError.contains("unknown H4 packet type 0x48 at stream offset 7"), "stderr: \(result.standardError)")
        #expect(result.standardError.contains("while Read Local Version Information (0x1001) was unanswered"), "stderr: \(result.standardError)")
    }

    @Test("a packet cut short by the end of the stream: how many octets were missing")
    func packetCutShort() async throws {
        let result = try await Self.run([0x04, 0x0E, 0x04, 0x01])
        #expect(result.status == 1)
        #expect(result.standardError.contains("stream ended inside a packet of type 0x04"), "stderr: \(result.standardError)")
        #expect(result.standardError.contains("while Reset (0x0c03) was unanswered"), "stderr: \(result.standardError)")
    }
}
