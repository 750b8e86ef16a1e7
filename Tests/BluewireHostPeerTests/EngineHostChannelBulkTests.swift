import Bluewire
import Foundation
import PeerTestSupport
import Testing

/// 10 MB of SDUs of mixed sizes (1 octet to the MTU) each way between an `L2CAPChannel` and
/// bumble's LE credit based channel, byte-exact and in order. The controllers use 251-octet LE ACL
/// packets (as with Data Length Extension) so one 247-octet K-frame is one ACL packet.
@Suite("EngineHost L2CAP channel bulk transfer against bumble", .serialized)
struct EngineHostChannelBulkTests {
    static let octets = 10_000_000

    @Test("10 MB each way, SDUs of 1 to 1024 octets, byte-exact and in order")
    func tenMegabytesEachWay() async throws {
        let record = FileManager.default.temporaryDirectory.appendingPathComponent("coc-\(UUID().uuidString.prefix(8)).bin")
        defer { try? FileManager.default.removeItem(at: record) }
        let arguments = [
            "--peripheral", "--psm", "0x80", "--mtu", "1024", "--mps", "247", "--credits", "64",
            "--acl-length", "251", "--record", record.path,
        ]
        try await withBumblePeer([.tcp], arguments: arguments, script: "bumble_coc.py") { peer in
            let events = CocPeerEvents(peer)
            let (host, handle) = try await EngineHostChannelTests.connected(peer)
            let channel = try await host.openChannel(connection: handle, psm: SPSM(0x80), mtu: 1024, mps: 247, credits: 64)
            #expect(channel.peerMTU == 1024 && channel.peerMPS == 247)

            // Bluewire → bumble.
            let started = ContinuousClock.now
            var sent = 0
            for sdu in MixedSDUs(seed: 1, octets: Self.octets, mtu: channel.peerMTU) {
                try await channel.send(sdu)
                sent += 1
            }
            let recorded = await events.wait(timeout: .seconds(600)) { $0["octets"] as? Int == Self.octets && $0["recorded"] != nil }
            let outbound = ContinuousClock.now - started
            #expect(recorded?["recorded"] as? Int == sent)
            let data = try [UInt8](Data(contentsOf: record))
            var offset = 0, index = 0, intact = 0
            for expected in MixedSDUs(seed: 1, octets: Self.octets, mtu: channel.peerMTU) {
                guard offset + 4 <= data.count else { break }
                let length = Int(data[offset]) | Int(data[offset + 1]) << 8 | Int(data[offset + 2]) << 16 | Int(data[offset + 3]) << 24
                let end = offset + 4 + length
                if end <= data.count, Array(data[(offset + 4)..<end]) == expected { intact += 1 }
                offset = end
                index += 1
            }
            #expect(intact == sent && offset == data.count, "bumble recorded \(intact) intact of \(sent)")

            // bumble → Bluewire.
            let inboundStarted = ContinuousClock.now
            peer.send(line: #"{"op": "stream", "channel": 0, "seed": 2, "octets": \#(Self.octets), "mtu": \#(channel.mtu)}"#)
            var expected = MixedSDUs(seed: 2, octets: Self.octets, mtu: channel.mtu)
            var received = 0, matching = 0, total = 0
            for try await sdu in channel.sdus {
                received += 1
                total += sdu.count
                if sdu == expected.next() { matching += 1 }
                if total >= Self.octets { break }
            }
            let inbound = ContinuousClock.now - inboundStarted
            #expect(total == Self.octets && matching == received, "\(matching) of \(received) SDUs as bumble sent them")
            print("10 MB Bluewire → bumble: \(sent) SDUs in \(outbound); bumble → Bluewire: \(received) SDUs in \(inbound)")
            await channel.close()
            await host.close()
        }
    }
}
