import BluewireCore
import BluewireSnoop
import Foundation
import Testing

@testable import BluewireTransport
import PeerTestSupport

@Suite("Capture tap")
struct CaptureTapTests {
    /// Runs tshark (Wireshark's dissector: a reader we did not write) and returns its output.
    private func tshark(_ arguments: [String]) throws -> String {
        let run = try ChildProcess.runBlocking(URL(fileURLWithPath: "/usr/bin/tshark"), arguments)
        #expect(run.status == 0, "tshark \(arguments) failed")
        return run.standardOutput
    }

    @Test func tapWritesBothDirectionsToABtsnoopFileThatTsharkReadsWithoutMalformedFrames() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tap-\(UUID().uuidString).btsnoop").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let commands: [HCIPacket] = [
            hciReset,
            HCIPacket(type: .command, payload: [0x01, 0x10, 0x00]),  // Read Local Version Information
            HCIPacket(type: .command, payload: [0x09, 0x10, 0x00]),  // Read BD_ADDR
            HCIPacket(type: .command, payload: [0x02, 0x20, 0x00]),  // LE Read Buffer Size
        ]
        var received: [HCIPacket] = []
        try await withBumblePeer([.tcp]) { peer in
            let base = try await TransportSpec(parsing: peer.transports[0]).open()
            let tap = try CaptureTap(wrapping: base, path: path)
            var iterator = tap.inbound.makeAsyncIterator()
            for command in commands {
                try await tap.send(command)
                if let answer = try await iterator.next() { received.append(answer) }
            }
            await tap.close()
            #expect(tap.captureError == nil)
        }
        #expect(received.count == commands.count)

        // Our own reader: the records are the packets, in order, with their directions.
        let reader = try CaptureFileReader(path: path)
        var records: [(HCIPacket, PacketDirection)] = []
        while let record = try reader.next() {
            if let packet = record.packet { records.append((packet, record.direction)) }
        }
        let expected = zip(commands, received).flatMap { [($0, PacketDirection.hostToController), ($1, .controllerToHost)] }
        #expect(records.map(\.0) == expected.map(\.0))
        #expect(records.map(\.1) == expected.map(\.1))

        // tshark: every frame decodes, none is malformed, and it agrees on types and directions.
        let frames = try tshark(["-r", path, "-T", "fields", "-e", "frame.number", "-e", "hci_h4.type", "-e", "hci_h4.direction"])
            .split(separator: "\n")
        #expect(frames.count == expected.count)
        let typesAndDirections = frames.map { line in line.split(separator: "\t").dropFirst().joined(separator: " ") }
        #expect(typesAndDirections == expected.map { "0x\(hex($0.0.type.rawValue, width: 2)) 0x\(hex($0.1.rawValue, width: 2))" })
        let malformed = try tshark(["-r", path, "-Y", "_ws.malformed || _ws.expert.severity == error"])
        #expect(malformed.isEmpty, "malformed frames:\n\(malformed)")
    }
}
