import BluewireCore
import Synchronization
import Testing

@testable import BluewireTransport

@Suite("Inbound packet sequence: a burst taken at once")
struct HCIInboundPacketsBurstTests {
    private func event(_ code: UInt8) -> HCIPacket { HCIPacket(type: .event, payload: [code, 0]) }

    @Test func takeBufferedHandsOverEveryBufferedPacketInOrderAndEmptiesTheBatchFirst() async throws {
        let (packets, continuation) = HCIInboundPackets.makeStream()
        var iterator = packets.makeAsyncIterator()
        var batch = [event(0xEE)]  // left over from an earlier burst: removed, not handed in again
        iterator.takeBuffered(into: &batch)
        #expect(batch.isEmpty, "nothing buffered: an empty batch")
        for code in 1...5 { continuation.yield(event(UInt8(code))) }
        #expect(try await iterator.next() == event(1))
        iterator.takeBuffered(into: &batch)
        #expect(batch == (2...5).map { event(UInt8($0)) })
        continuation.yield(event(6))
        iterator.takeBuffered(into: &batch)
        #expect(batch == [event(6)], "the queue goes on after the swap of storage")
    }

    @Test func theEndIsReportedByNextAfterTheBurst() async throws {
        let (packets, continuation) = HCIInboundPackets.makeStream()
        continuation.yield(event(1))
        continuation.yield(event(2))
        continuation.finish(throwing: .closed)
        var iterator = packets.makeAsyncIterator()
        var batch: [HCIPacket] = []
        iterator.takeBuffered(into: &batch)
        #expect(batch == [event(1), event(2)])
        await #expect(throws: TransportError.closed) { _ = try await iterator.next() }
        #expect(try await iterator.next() == nil)
    }

    @Test func observersSeeEveryPacketOfTheBurst() {
        let (packets, continuation) = HCIInboundPackets.makeStream()
        let seen = Mutex<[HCIPacket]>([])
        var iterator = packets.observing { packet in seen.withLock { $0.append(packet) } }.makeAsyncIterator()
        continuation.yield(event(1))
        continuation.yield(event(2))
        var batch: [HCIPacket] = []
        iterator.takeBuffered(into: &batch)
        #expect(seen.withLock { $0 } == batch)
        #expect(batch.count == 2)
    }
}
