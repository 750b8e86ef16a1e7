import BluewireCore
import BluewireGATT
import BluewireTransport
import Synchronization

/// Just enough of a controller for the Host benchmark: it answers bring-up and LE Create Connection
/// at once (a connection on handle 0x0040), returns ACL credits, answers the Host's ATT requests
/// from a GATT server (service 0xFFE0 with one notifying characteristic, value handle 0x0003, and
/// one writable, value handle `BenchController.writableHandle`), and
/// lets the benchmark push packets into the Host as a transport's reader thread would.
final class BenchController: HCITransport {
    static let peer = BluetoothAddress(0xC0, 0x11, 0x22, 0x33, 0x44, 0x55, type: .random)
    /// The writable characteristic's value handle (declaration 0x0005).
    static let writableHandle: UInt16 = 0x0006

    let inbound: HCIInboundPackets
    private let continuation: HCIInboundPackets.Continuation
    private let closed = Mutex(false)
    private let server: Mutex<GATTServer>

    init() {
        (inbound, continuation) = HCIInboundPackets.makeStream()
        var builder = GATTDatabaseBuilder()
        _ = try? builder.addService(BluetoothUUID(0xFFE0))
        _ = try? builder.addCharacteristic(BluetoothUUID(0xFFE1), properties: [.notify], permissions: [.read], value: .cached([0]))
        // Written by the Write Request benchmarks (WritePath.swift), after the notifying one so its
        // handles stay 0x0003/0x0004.
        _ = try? builder.addCharacteristic(BluetoothUUID(0xFFE2), properties: [.write], permissions: [.write], value: .cached([0]))
        var server = GATTServer(database: builder.build())
        server.connect(0x0040)
        self.server = Mutex(server)
    }

    /// A controller-to-host ACL packet (no H4 byte).
    func deliver(_ acl: [UInt8]) {
        continuation.yield(HCIPacket(type: .acl, payload: acl))
    }

    /// Packets that arrived together, as the descriptor transports yield the packets of one read
    /// (or of one poll wake-up on the user channel): one hand-off for all of them.
    func deliver(packet: HCIPacket) {
        continuation.yield(packet)
    }

    func deliver(burst: ArraySlice<HCIPacket>) {
        continuation.yield(contentsOf: burst)
    }

    func send(_ packet: HCIPacket) async throws(TransportError) {
        if closed.withLock({ $0 }) { throw .closed }
        let bytes = Array(packet.payload)
        switch packet.type {
        case .command where bytes.count >= 3:
            command(UInt16(bytes[0]) | UInt16(bytes[1]) << 8)
        case .acl:
            // Number Of Completed Packets for handle 0x0040, one packet.
            event(0x13, [0x01, 0x40, 0x00, 0x01, 0x00])
            // Whole L2CAP PDUs only: the Host fragments to the 251 octets reported below.
            guard bytes.count >= 8, bytes[6] == 0x04, bytes[7] == 0x00 else { break }
            if let answer = server.withLock({ $0.handle(bytes[8...], from: 0x0040) }) {
                let l2cap = [UInt8(answer.count & 0xFF), UInt8(answer.count >> 8), 0x04, 0x00] + answer
                deliver([0x40, 0x20, UInt8(l2cap.count & 0xFF), UInt8(l2cap.count >> 8)] + l2cap)
            }
        default:
            break
        }
    }

    func close() async {
        let first = closed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        if first { continuation.finish() }
    }

    private func command(_ opcode: UInt16) {
        switch opcode {
        case 0x1001: complete(opcode, [0x00, 0x09, 0x00, 0x00, 0x09, 0xFF, 0xFF, 0x00, 0x00])
        case 0x1002: complete(opcode, [0x00] + [UInt8](repeating: 0, count: 64))
        case 0x1003, 0x2003: complete(opcode, [0x00] + [UInt8](repeating: 0, count: 8))
        case 0x1009: complete(opcode, [0x00, 1, 2, 3, 4, 5, 6])
        case 0x2002: complete(opcode, [0x00, 251, 0, 16])
        case 0x200D:
            event(0x0F, [0x00, 0x01, 0x0D, 0x20])
            event(0x3E, [0x01, 0x00, 0x40, 0x00, 0x00, 0x01] + Self.peer.littleEndianBytes + [0x06, 0x00, 0x00, 0x00, 0xF4, 0x01, 0x00])
        case 0x0406:
            event(0x0F, [0x00, 0x01, 0x06, 0x04])
            event(0x05, [0x00, 0x40, 0x00, 0x16])
        default:
            complete(opcode, [0x00])
        }
    }

    private func complete(_ opcode: UInt16, _ parameters: [UInt8]) {
        event(0x0E, [0x01, UInt8(opcode & 0xFF), UInt8(opcode >> 8)] + parameters)
    }

    private func event(_ code: UInt8, _ parameters: [UInt8]) {
        continuation.yield(HCIPacket(type: .event, payload: [code, UInt8(parameters.count)] + parameters))
    }
}
