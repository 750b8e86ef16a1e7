import BluewireCore
import ExampleSupport
import Foundation
import Testing
import PeerTestSupport

/// The value handle of the characteristic with `uuid` in central `central`'s discovery events.
func discoveredHandle(_ events: [PeerJSON], central: Int, _ uuid: BluetoothUUID) -> Int? {
    events.first {
        $0.isCentral(central, "characteristic")
            && $0["characteristic"]?.string?.uppercased().contains(uuid.uuidString.uppercased()) == true
    }?["handle"]?.int
}

/// The chat room example (Examples/ChatRoom) run as processes, with bumble centrals and Bluewire's
/// own chat-central on one bumble link.
@Suite("Example: chat room")
struct ExampleChatRoomInteropTests {
    @Test func twoBumbleCentralsUseTheRoomAtOnceAndEachSeesTheOthersMessages() async throws {
        let address = newStaticAddress()
        try await withBumblePeer([.tcp], arguments: ["--central", address.hexString, "--centrals", "2", "--manual"]) { peer in
            let peerLog = EventLog(peer.events.map { PeerJSON(line: $0) })
            let room = try PeripheralProcess("chat-peripheral", ["--transport", peer.transports[0], "--own-address", address.hexString])
            defer { room.stop() }
            try await room.first("the room to open") { $0.hasPrefix("chat room \"") }
            for central in 0..<2 {
                // An MTU exchange first, so a notification carries a whole message.
                peer.command(central, "connect", ["discover": true, "mtu": 100])
                try await peerLog.first("central \(central)'s discovery") { $0.isCentral(central, "discovered") }
            }
            try await room.lines.wait(for: 2, "both centrals listening") { $0.hasPrefix("listening: ") }
            let events = await peerLog.events
            let message = try #require(discoveredHandle(events, central: 0, ChatRoomProfile.message))
            let roomHandle = try #require(discoveredHandle(events, central: 1, ChatRoomProfile.room))

            let lines = ["alice: hi bob, this message is longer than twenty octets", "bob: hi alice"]
            for (central, line) in lines.enumerated() {
                peer.command(central, "write", ["handle": message, "value": hexBytes(Array(line.utf8))])
                let written = try await peerLog.first("central \(central)'s write") { $0.isCentral(central, "written") }
                #expect(written["error"] == nil, "\(written)")
                // Both centrals get every message, the writer included.
                for listener in 0..<2 {
                    let hex = hexBytes(Array(line.utf8))
                    try await peerLog.first("central \(listener) to hear \"\(line)\"") {
                        $0.isCentral(listener, "notification", roomHandle) && $0["value"]?.string == hex
                    }
                }
            }
            // The room keeps the transcript: longer than the MTU, read with Read Blob.
            peer.command(1, "read", ["handle": roomHandle])
            let transcript = try await peerLog.first("the transcript") { $0.isCentral(1, "read", roomHandle) }
            #expect(transcript["value"]?.string == hexBytes(Array(lines.joined(separator: "\n").utf8)))
            // Not UTF-8: the room's write handler refuses it with Value Not Allowed (0x13).
            peer.command(0, "write", ["handle": message, "value": "ff"])
            let refused = try await peerLog.wait(for: 2, "the refused write") { $0.isCentral(0, "written") }
            #expect(refused.last?["error"]?.int == 0x13)
            // The room's log line for a message may still be in its stdout pipe when bumble reports the
            // notifications: wait for both, then check the refused write added none.
            try await room.lines.wait(for: 2, "the room to log both messages") { $0.hasPrefix("message from ") }
            #expect(await room.lines.events.filter { $0.hasPrefix("message from ") }.count == 2)

            room.send(signal: SIGTERM)
            #expect(await room.exitStatus() == 0, "stderr: \(room.standardError)")
            #expect(await room.lines.events.last?.hasPrefix("chat room closed") == true)
        }
    }

    @Test func bluewireChatCentralAndABumbleCentralTalkThroughTheRoom() async throws {
        let address = newStaticAddress()
        try await withBumblePeer([.tcp, .tcp], arguments: ["--central", address.hexString, "--manual"]) { peer in
            let peerLog = EventLog(peer.events.map { PeerJSON(line: $0) })
            let room = try PeripheralProcess("chat-peripheral", ["--transport", peer.transports[0], "--own-address", address.hexString, "--name", "Test Room"])
            defer { room.stop() }
            try await room.first("the room to open") { $0.hasPrefix("chat room \"Test Room\"") }
            // alice finds the room by scanning for its service.
            let alice = try PeripheralProcess("chat-central", ["--transport", peer.transports[1], "--nick", "alice"], input: true)
            defer { alice.stop() }
            let joined = try await alice.first("alice to join") { $0.hasPrefix("joined ") }
            #expect(joined == "joined \(address) as alice (mtu 517)")
            peer.command(0, "connect", ["discover": true, "mtu": 64])
            try await peerLog.first("bumble's discovery") { $0.isCentral(0, "discovered") }
            try await room.lines.wait(for: 2, "both listening") { $0.hasPrefix("listening: ") }
            let events = await peerLog.events
            let message = try #require(discoveredHandle(events, central: 0, ChatRoomProfile.message))
            let roomHandle = try #require(discoveredHandle(events, central: 0, ChatRoomProfile.room))

            alice.write(line: "hello bumble")
            let hello = hexBytes(Array("alice: hello bumble".utf8))
            try await peerLog.first("bumble to hear alice") { $0.isCentral(0, "notification", roomHandle) && $0["value"]?.string == hello }
            peer.command(0, "write", ["handle": message, "value": hexBytes(Array("bob: hello alice".utf8))])
            try await alice.first("alice to hear bob") { $0 == "bob: hello alice" }
            #expect(await alice.lines.events.contains("alice: hello bumble"), "alice hears her own message relayed")

            alice.closeInput()
            #expect(await alice.exitStatus() == 0, "stderr: \(alice.standardError)")
            try await room.first("alice to leave") { $0.hasPrefix("left: ") }
        }
    }

    /// "Join a room if one is found, else host it": the first chat-central finds no room and hosts
    /// it; the second, started once the first is hosting, finds and joins it. A message goes through
    /// both ways.
    @Test func theFirstChatCentralHostsTheRoomAndTheSecondJoinsIt() async throws {
        let aliceAddress = newStaticAddress()
        try await withBumblePeer([.tcp, .tcp], arguments: []) { peer in
            let alice = try PeripheralProcess("chat-central", [
                "--transport", peer.transports[0], "--own-address", aliceAddress.hexString, "--nick", "alice", "--join-window", "2",
            ], input: true)
            defer { alice.stop() }
            let hosting = try await alice.first("alice to host") { $0.hasPrefix("hosting room ") || $0.hasPrefix("joined ") }
            #expect(hosting == "hosting room \"Bluewire Chat\" as \(aliceAddress) (nick alice)")

            let bob = try PeripheralProcess("chat-central", ["--transport", peer.transports[1], "--nick", "bob"], input: true)
            defer { bob.stop() }
            let joined = try await bob.first("bob to join") { $0.hasPrefix("joined ") || $0.hasPrefix("hosting room ") }
            #expect(joined.hasPrefix("joined \(aliceAddress) as bob"), "\(joined)")
            try await alice.first("alice to see bob arrive") { $0.hasSuffix(" joined)") }

            bob.write(line: "hi alice")
            try await alice.first("alice to hear bob") { $0 == "bob: hi alice" }
            try await bob.first("bob to hear his message relayed") { $0 == "bob: hi alice" }
            alice.write(line: "hi bob")
            try await bob.first("bob to hear alice") { $0 == "alice: hi bob" }

            bob.closeInput()
            #expect(await bob.exitStatus() == 0, "stderr: \(bob.standardError)")
            try await alice.first("alice to see bob leave") { $0.hasSuffix(" left)") }
            alice.closeInput()
            #expect(await alice.exitStatus() == 0, "stderr: \(alice.standardError)")
            // The host prints each message once: the relay does not echo its own posts back to it.
            #expect(await alice.lines.events.filter { $0 == "bob: hi alice" || $0 == "alice: hi bob" }.count == 2)
        }
    }
}
