import BluewireCore
import Testing

@testable import BluewireTransport
import PeerTestSupport

/// Bluewire's stream transports against bumble's controller (a peer we did not write).
@Suite("Stream transports against bumble", .serialized)
struct StreamTransportTests {
    @Test(arguments: [BumblePeer.ControllerTransport.tcp, .unix, .pty])
    func resetGetsCommandCompleteFromBumble(kind: BumblePeer.ControllerTransport) async throws {
        try await withBumblePeer([kind]) { peer in
            let spec = try TransportSpec(parsing: peer.transports[0])
            let transport = try await spec.open()
            try await transport.send(hciReset)
            let first = await nextInbound(transport, within: .seconds(10))
            #expect(first == .packet(HCIPacket(type: .event, payload: resetComplete)), "over \(spec)")
            await transport.close()
        }
    }

    @Test(arguments: [":1000000", ":921600:rtscts"])
    func serialOptionsConfigureThePtyAndResetStillWorks(options: String) async throws {
        try await withBumblePeer([.pty]) { peer in
            let spec = try TransportSpec(parsing: peer.transports[0] + options)
            guard case .serial(_, let baudRate, _) = spec else {
                Issue.record("\(spec) is not a serial transport")
                return
            }
            #expect(baudRate == Int(options.dropFirst().prefix { $0 != ":" }))
            let transport = try await spec.open()
            try await transport.send(hciReset)
            #expect(await nextInbound(transport, within: .seconds(10)) == .packet(HCIPacket(type: .event, payload: resetComplete)))
            await transport.close()
        }
    }

    @Test func concurrentSendsAllArriveWholeAndAnswersComeInOrder() async throws {
        try await withBumblePeer([.tcp]) { peer in
            let transport = try await TransportSpec(parsing: peer.transports[0]).open()
            // Read Local Version Information (0x1001), Read BD_ADDR (0x1009), Read Buffer Size (0x1005):
            // each answered by a Command Complete naming its opcode.
            let opcodes: [UInt16] = [0x1001, 0x1009, 0x1005]
            let count = 60
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<count {
                    let opcode = opcodes[index % opcodes.count]
                    group.addTask {
                        try await transport.send(HCIPacket(type: .command, payload: [UInt8(opcode & 0xFF), UInt8(opcode >> 8), 0]))
                    }
                }
                try await group.waitForAll()
            }
            var answered: [UInt16] = []
            var iterator = transport.inbound.makeAsyncIterator()
            while answered.count < count, let packet = try await iterator.next() {
                #expect(packet.type == .event && packet.payload.first == 0x0E, "unexpected \(packet)")
                let p = Array(packet.payload)
                answered.append(UInt16(p[3]) | UInt16(p[4]) << 8)  // event code, length, credits, opcode
            }
            #expect(answered.count == count)
            #expect(Set(answered) == Set(opcodes), "every command was understood, none arrived torn")
            await transport.close()
        }
    }

    @Test func sequentialCommandsAreAnsweredInTheOrderSent() async throws {
        try await withBumblePeer([.unix]) { peer in
            let transport = try await TransportSpec(parsing: peer.transports[0]).open()
            let opcodes: [UInt16] = (0..<30).map { [0x1001, 0x1009, 0x1005, 0x0C03][$0 % 4] }
            for opcode in opcodes {
                try await transport.send(HCIPacket(type: .command, payload: [UInt8(opcode & 0xFF), UInt8(opcode >> 8), 0]))
            }
            var answered: [UInt16] = []
            for try await packet in transport.inbound {
                let p = Array(packet.payload)
                answered.append(UInt16(p[3]) | UInt16(p[4]) << 8)  // event code, length, credits, opcode
                if answered.count == opcodes.count { break }
            }
            #expect(answered == opcodes)
            await transport.close()
        }
    }

    @Test func aTimedOutWaitLeavesTheTransportUsable() async throws {
        try await withBumblePeer([.tcp]) { peer in
            let transport = try await TransportSpec(parsing: peer.transports[0]).open()
            #expect(await nextInbound(transport, within: .milliseconds(200)) == .timedOut)
            try await transport.send(hciReset)
            #expect(await nextInbound(transport, within: .seconds(10)) == .packet(HCIPacket(type: .event, payload: resetComplete)))
            await transport.close()
        }
    }

    @Test func closeEndsInboundAndLaterSendsFailWithClosed() async throws {
        try await withBumblePeer([.tcp]) { peer in
            let transport = try await TransportSpec(parsing: peer.transports[0]).open()
            await transport.close()
            await transport.close()  // idempotent
            #expect(await nextInbound(transport, within: .seconds(5)) == .finished)
            await #expect(throws: TransportError.closed) { try await transport.send(hciReset) }
        }
    }
}
