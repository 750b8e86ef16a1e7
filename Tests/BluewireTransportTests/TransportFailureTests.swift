import BluewireCore
import Testing

@testable import BluewireTransport
import PeerTestSupport

@Suite("Transport failures are typed, and nothing hangs")
struct TransportFailureTests {
    @Test func silentControllerLeavesTheTransportOpenAndACallerTimeoutFires() async throws {
        let server = try ScriptedStreamServer(.silent)
        defer { server.stop() }
        let transport = try await TransportSpec(parsing: server.transport).open()
        try await transport.send(hciReset)
        // Event order, not a duration: the caller's timeout ends the wait (`.timedOut`), not a packet
        // or the end of the stream.
        #expect(await nextInbound(transport, within: .milliseconds(300)) == .timedOut)
        // Still open: another send goes out, and close completes at once.
        try await transport.send(hciReset)
        await transport.close()
        #expect(await nextInbound(transport, within: .seconds(5)) == .finished)
    }

    @Test func aTransportDroppedWithoutCloseIsClosedAndItsInboundEnds() async throws {
        let server = try ScriptedStreamServer(.silent)
        defer { server.stop() }
        var transport: (any HCITransport)? = try await TransportSpec(parsing: server.transport).open()
        let inbound = try #require(transport).inbound
        #expect(await nextInbound(inbound, within: .milliseconds(100)) == .timedOut)
        transport = nil
        #expect(await nextInbound(inbound, within: .seconds(5)) == .finished)
    }

    @Test func streamEndingInsideAPacketIsATypedFramingError() async throws {
        let server = try ScriptedStreamServer(.sendThenClose([0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00, 0x04, 0x0E, 0x04, 0x01]))
        defer { server.stop() }
        let transport = try await TransportSpec(parsing: server.transport).open()
        var iterator = transport.inbound.makeAsyncIterator()
        #expect(try await iterator.next() == HCIPacket(type: .event, payload: resetComplete))
        await #expect(throws: TransportError.framing(H4FramingError(.endedMidPacket(needed: 3), packetType: 0x04, offset: 7))) {
            _ = try await iterator.next()
        }
        await #expect(throws: TransportError.self) { try await transport.send(hciReset) }
        await transport.close()
    }

    @Test func garbageFromTheControllerClosesTheTransportWithTheTypeByteAndOffset() async throws {
        let server = try ScriptedStreamServer(.sendThenClose([0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00, 0x7F, 0x00]))
        defer { server.stop() }
        let transport = try await TransportSpec(parsing: server.transport).open()
        var iterator = transport.inbound.makeAsyncIterator()
        #expect(try await iterator.next() == HCIPacket(type: .event, payload: resetComplete))
        await #expect(throws: TransportError.framing(H4FramingError(.unknownPacketType, packetType: 0x7F, offset: 7))) {
            _ = try await iterator.next()
        }
        let error = await #expect(throws: TransportError.self) { try await transport.send(hciReset) }
        #expect(error == .framing(H4FramingError(.unknownPacketType, packetType: 0x7F, offset: 7)), "sends report why it closed")
    }

    @Test func streamEndingAtAPacketBoundaryFinishesInbound() async throws {
        let server = try ScriptedStreamServer(.sendThenClose([0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]))
        defer { server.stop() }
        let transport = try await TransportSpec(parsing: server.transport).open()
        var received: [HCIPacket] = []
        for try await packet in transport.inbound { received.append(packet) }
        #expect(received == [HCIPacket(type: .event, payload: resetComplete)])
    }

    @Test func connectingToANonListeningPortIsASystemCallError() async throws {
        let server = try ScriptedStreamServer(.silent)
        let port = server.port
        server.stop()
        let error = await #expect(throws: TransportError.self) { _ = try await TransportSpec.tcp(host: "127.0.0.1", port: port).open() }
        guard case .system(let call) = error else {
            Issue.record("expected a system call error, got \(String(describing: error))")
            return
        }
        #expect(call.errno == .connectionRefused)
        #expect(call.call == "connect")
    }

    @Test func missingUnixSocketAndSerialDeviceAreNoSuchDevice() async {
        await #expect(throws: TransportError.noSuchDevice("/nonexistent/bluewire.sock")) {
            _ = try await TransportSpec.unix(path: "/nonexistent/bluewire.sock").open()
        }
        await #expect(throws: TransportError.noSuchDevice("/nonexistent/ttyBLE")) {
            _ = try await TransportSpec(parsing: "serial:/nonexistent/ttyBLE").open()
        }
    }

    @Test func userChannelOnAMissingControllerIsATypedError() async {
        // Without kernel Bluetooth (these machines) the socket itself fails; with it, hci999 does not exist.
        let error = await #expect(throws: TransportError.self) { _ = try await TransportSpec.hciUserChannel(device: 999).open() }
        let expected: [TransportError] = [.bluetoothUnavailable, .noSuchDevice("hci999"),
                                          .permissionDenied("hci999 (the HCI user channel needs CAP_NET_ADMIN)")]
        #expect(error.map(expected.contains) == true, "got \(String(describing: error))")
    }
}
