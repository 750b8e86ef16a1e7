import BluewireCore
import Synchronization
import Testing

@testable import BluewireTransport

@Suite("Inbound packet sequence")
struct HCIInboundPacketsTests {
    private func event(_ code: UInt8) -> HCIPacket { HCIPacket(type: .event, payload: [code, 0]) }

    @Test func packetsComeOutInTheOrderTheyWentIn() async throws {
        let (packets, continuation) = HCIInboundPackets.makeStream()
        let sent = (0..<200).map { event(UInt8($0 & 0xFF)) }
        let producer = Task.detached { for packet in sent { continuation.yield(packet) }; continuation.finish() }
        var received: [HCIPacket] = []
        for try await packet in packets { received.append(packet) }
        await producer.value
        #expect(received == sent)
    }

    @Test func anErrorIsThrownOnceAfterTheBufferedPacketsThenTheSequenceEnds() async throws {
        let (packets, continuation) = HCIInboundPackets.makeStream()
        continuation.yield(event(1))
        continuation.finish(throwing: .closed)
        continuation.yield(event(2))  // ignored after finish
        var iterator = packets.makeAsyncIterator()
        #expect(try await iterator.next() == event(1))
        await #expect(throws: TransportError.closed) { _ = try await iterator.next() }
        #expect(try await iterator.next() == nil)
    }

    @Test func aCancelledWaitReturnsNilAndLosesNoLaterPacket() async throws {
        let (packets, continuation) = HCIInboundPackets.makeStream()
        let waiting = Task {
            var iterator = packets.makeAsyncIterator()
            return try await iterator.next()
        }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        #expect(try await waiting.value == nil)
        continuation.yield(event(7))
        var iterator = packets.makeAsyncIterator()
        #expect(try await iterator.next() == event(7))
    }

    @Test func observersSeeEachPacketAsTheConsumerReceivesIt() async throws {
        let (packets, continuation) = HCIInboundPackets.makeStream()
        let seen = ObservedPackets()
        continuation.yield(event(1))
        continuation.yield(event(2))
        continuation.finish()
        var received: [HCIPacket] = []
        for try await packet in packets.observing({ seen.append($0) }) {
            received.append(packet)
            #expect(seen.all.last == packet, "observer runs before the consumer sees the packet")
        }
        #expect(seen.all == [event(1), event(2)])
    }
}

private final class ObservedPackets: Sendable {
    private let packets = Mutex<[HCIPacket]>([])
    func append(_ packet: HCIPacket) { packets.withLock { $0.append(packet) } }
    var all: [HCIPacket] { packets.withLock { $0 } }
}
