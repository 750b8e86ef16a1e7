import BluewireATT
import BluewireCore
import Testing
@testable import BluewireGATT

/// The server behind an `ATTBearer`, wired the way the host does it: the bearer decodes and polices
/// PDUs, the server answers requests.
struct BearerHarness {
    var bearer = ATTBearer(preferredMTU: 517)
    var server: GATTServer
    let connection: UInt16 = 0x0040

    /// Feeds client bytes in and returns every PDU the bearer sends out, in order.
    mutating func receive(_ bytes: [UInt8]) throws -> [[UInt8]] {
        bearer.receive(bytes, now: .zero)
        return try pump()
    }

    mutating func indicate(_ handle: UInt16, _ value: [UInt8]) throws -> [[UInt8]] {
        for pdu in try server.indicate(handle: handle, value: value, to: connection) {
            try forwardIndication(pdu)
        }
        return try pump()
    }

    mutating func forwardIndication(_ pdu: GATTOutboundPDU) throws {
        guard case .handleValueIndication(let handle, let value) = try ATTPDU(decoding: pdu.bytes) else { return }
        _ = try bearer.indicate(handle: handle, value: value, now: .zero)
    }

    mutating func pump() throws -> [[UInt8]] {
        var sent: [[UInt8]] = []
        while let output = bearer.nextOutput() {
            switch output {
            case .send(let bytes):
                sent.append(bytes)
            case .event(.request(let request)):
                if let response = server.respond(to: request, from: connection) { try bearer.respond(response) }
            case .event(.command(let command)):
                _ = server.respond(to: command, from: connection)
            case .event(.mtuChanged(let mtu)):
                server.setMTU(mtu, for: connection)
            case .event(.indicationConfirmed):
                if let next = server.confirm(connection: connection) { try forwardIndication(next) }
            case .event:
                break
            }
        }
        return sent
    }
}

@Suite struct GATTServerBearerTests {
    @Test func requestsThroughTheBearerGetTheServersAnswers() throws {
        var harness = BearerHarness(server: try ServerFixture().server())
        #expect(try harness.receive([0x02, 0x00, 0x02]) == [[0x03, 0x05, 0x02]])
        #expect(harness.server.mtu(for: 0x0040) == 512)
        #expect(try harness.receive([0x0A, 0x11, 0x00]) == [[0x0B] + ServerFixture.longValue])
        #expect(try harness.receive([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x01, 0x28]) == [[0x11, 0x06, 0x1D, 0x00, 0x1F, 0x00, 0x0A, 0x18]])
        #expect(try harness.receive([0x12, 0x18, 0x00, 0x07]) == [[0x13]])
        #expect(try harness.receive([0x52, 0x18, 0x00, 0x08]) == [])
        #expect(harness.server.database[handle: 0x18]?.cachedValue == [0x08])
    }

    @Test func errorsThroughTheBearerKeepTheirBytes() throws {
        var harness = BearerHarness(server: try ServerFixture().server())
        #expect(try harness.receive([0x0A, 0x99, 0x00]) == [[0x01, 0x0A, 0x99, 0x00, 0x01]])
        #expect(try harness.receive([0x16, 0x03, 0x00, 0x00, 0x00, 0x01]) == [[0x01, 0x16, 0x03, 0x00, 0x03]])
    }

    @Test func indicationsFlowOneAtATimeThroughTheBearer() throws {
        var harness = BearerHarness(server: try ServerFixture().server())
        #expect(try harness.receive([0x12, 0x12, 0x00, 0x02, 0x00]) == [[0x13]])
        #expect(try harness.indicate(0x11, [1]) == [[0x1D, 0x11, 0x00, 0x01]])
        #expect(try harness.indicate(0x11, [2]) == [])
        #expect(try harness.receive([0x1E]) == [[0x1D, 0x11, 0x00, 0x02]])
        #expect(try harness.receive([0x1E]) == [])
        #expect(!harness.server.indicationOutstanding(on: 0x0040))
    }

    @Test func respondIgnoresWhatIsNotARequest() throws {
        var server = try ServerFixture().server()
        #expect(server.respond(to: .readResponse(value: [1]), from: conn) == nil)
        #expect(server.respond(to: .handleValueConfirmation, from: conn) == nil)
        #expect(server.respond(to: .unknown(ATTOpcode(0x3F), parameters: []), from: conn)
            == .errorResponse(requestOpcode: ATTOpcode(0x3F), handle: 0, error: .requestNotSupported))
        #expect(server.respond(to: .unknown(ATTOpcode(0x7F), parameters: []), from: conn) == nil)
    }

    @Test func setMTUIsClampedToTheServersLimits() throws {
        var server = try ServerFixture().server(GATTServerConfiguration(serverMTU: 247))
        server.setMTU(600, for: conn)
        #expect(server.mtu(for: conn) == 247)
        server.setMTU(10, for: conn)
        #expect(server.mtu(for: conn) == 23)
    }
}
