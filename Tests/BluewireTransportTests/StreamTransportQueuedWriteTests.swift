import BluewireCore
import Synchronization
import Testing

@testable import BluewireTransport
import PeerTestSupport

/// The descriptor transports' outbound path when the kernel does not take a packet whole: the rest
/// is queued under the same lock as the partial write, the I/O thread finishes it, and its sender
/// waits until then. A send the kernel takes whole returns without suspending; these tests cover
/// the other case, which needs a peer that stops reading (a fake, since no real peer stalls on cue).
@Suite("Stream transport: sends the kernel does not take whole")
struct StreamTransportQueuedWriteTests {
    /// An ACL packet of `length` bytes of payload after its header, every byte saying which sender
    /// (of 4) and which of its packets (of 64) it is, so a packet cut or interleaved is seen.
    static func packet(sender: UInt8, index: UInt8, length: Int) -> HCIPacket {
        let header: [UInt8] = [0x01, 0x00, UInt8(length & 0xFF), UInt8(length >> 8)]
        return HCIPacket(type: .acl, payload: header + [UInt8](repeating: sender &* 64 &+ index, count: length))
    }

    /// 4 × 64 × 65 kB ≈ 16.6 MB: far more than a loopback TCP connection buffers with no one reading
    /// (the sender's buffer grows to 4 MB at most; the receiver's stays small while nothing is read).
    static let senders: UInt8 = 4, perSender: UInt8 = 64, length = 65_000

    /// A TCP transport to a peer that reads nothing until told (`ScriptedStreamServer.stalledReader`),
    /// and the transport's loop, which says when a write is queued.
    static func stalledPeer() async throws -> (ScriptedStreamServer, any HCITransport, DescriptorIOLoop) {
        let server = try ScriptedStreamServer(.stalledReader)
        let transport = try await TransportSpec(parsing: server.transport).open()
        guard let loop = (transport as? DescriptorTransport)?.loop else {
            server.stop()
            throw TransportError.closed
        }
        return (server, transport, loop)
    }

    @Test("concurrent senders filling the kernel's buffers: every packet arrives whole, each sender's in order")
    func queuedSendsArriveWholeAndInOrder() async throws {
        let (server, transport, loop) = try await Self.stalledPeer()
        defer { server.stop() }
        let senders = Self.senders, perSender = Self.perSender, length = Self.length
        let sending = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for sender in 0..<senders {
                    group.addTask {
                        for index in 0..<perSender {
                            try await transport.send(Self.packet(sender: sender, index: index, length: length))
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        await loop.waitForQueuedWrite()
        server.startReading()
        try await sending.value
        await transport.close()

        var framer = H4Framer()
        framer.append(server.received())
        var next = [UInt8](repeating: 0, count: Int(senders))
        var count = 0
        while let packet = try framer.nextPacket() {
            let body = Array(packet.payload.dropFirst(4))
            #expect(packet.type == .acl && body.count == length, "packet \(count) arrived cut")
            let tag = try #require(body.first)
            #expect(body.allSatisfy { $0 == tag }, "packet \(count) mixes two senders' bytes")
            let sender = Int(tag / 64), index = tag % 64
            #expect(index == next[sender], "sender \(sender)'s packets out of order")
            next[sender] = index + 1
            count += 1
        }
        #expect(count == Int(senders) * Int(perSender))
        #expect(next == [UInt8](repeating: perSender, count: Int(senders)))
    }

    @Test("closing with sends queued: each of them fails with .closed, none hangs")
    func closeFailsQueuedSends() async throws {
        let (server, transport, loop) = try await Self.stalledPeer()
        defer { server.stop() }
        let outcomes = Outcomes()
        let sending = Task {
            await withTaskGroup(of: Void.self) { group in
                for sender in UInt8(0)..<Self.senders {
                    group.addTask {
                        for index in UInt8(0)..<Self.perSender {
                            do throws(TransportError) {
                                try await transport.send(Self.packet(sender: sender, index: index, length: Self.length))
                            } catch {
                                outcomes.record(error == .closed)
                                return
                            }
                        }
                        outcomes.record(false)
                    }
                }
            }
        }
        await loop.waitForQueuedWrite()
        await transport.close()
        await sending.value
        server.startReading()
        _ = server.received()
        #expect(outcomes.all == [true, true, true, true], "every sender stopped at a send that failed with .closed")
    }
}

/// What each sender's last send did: true if it failed with `.closed`.
private final class Outcomes: Sendable {
    private let state = Mutex<[Bool]>([])
    func record(_ closed: Bool) { state.withLock { $0.append(closed) } }
    var all: [Bool] { state.withLock { $0 } }
}
