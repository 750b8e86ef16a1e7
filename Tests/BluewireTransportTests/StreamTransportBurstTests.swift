import BluewireCore
import Testing

@testable import BluewireTransport
import PeerTestSupport

/// The descriptor transports hand the packets of one read to the consumer together
/// (`HCIInboundPackets.Continuation.yield(contentsOf:)`): nothing of a read is lost or reordered,
/// also when the read ends in garbage or in the end of the stream.
@Suite("Stream transport: the packets of one read")
struct StreamTransportBurstTests {
    static let complete: [UInt8] = [0x04] + resetComplete

    @Test func packetsOfOneReadArriveInOrderThenTheEnd() async throws {
        let server = try ScriptedStreamServer(.sendThenClose(Self.complete + Self.complete + Self.complete))
        defer { server.stop() }
        let transport = try await TransportSpec(parsing: server.transport).open()
        var iterator = transport.inbound.makeAsyncIterator()
        var received: [HCIPacket] = []
        while let packet = try await iterator.next() {
            received.append(packet)
            var rest: [HCIPacket] = []
            iterator.takeBuffered(into: &rest)
            received += rest
        }
        #expect(received == Array(repeating: HCIPacket(type: .event, payload: resetComplete), count: 3))
        await transport.close()
    }

    @Test func packetsBeforeGarbageInTheSameReadAreDeliveredBeforeTheFramingError() async throws {
        let server = try ScriptedStreamServer(.sendThenClose(Self.complete + Self.complete + [0x7F, 0x00]))
        defer { server.stop() }
        let transport = try await TransportSpec(parsing: server.transport).open()
        var iterator = transport.inbound.makeAsyncIterator()
        #expect(try await iterator.next() == HCIPacket(type: .event, payload: resetComplete))
        var rest: [HCIPacket] = []
        iterator.takeBuffered(into: &rest)
        if rest.isEmpty { #expect(try await iterator.next() == HCIPacket(type: .event, payload: resetComplete)) }
        else { #expect(rest == [HCIPacket(type: .event, payload: resetComplete)]) }
        await #expect(throws: TransportError.framing(H4FramingError(.unknownPacketType, packetType: 0x7F, offset: 14))) {
            _ = try await iterator.next()
        }
        await transport.close()
    }
}
