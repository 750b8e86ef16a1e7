import BluewireCore
import BluewireTesting
import Synchronization

/// A central with no host stack: the test is its host. It drives a `VirtualController` with
/// hand-made HCI commands and ACL packets, so it can put any bytes at all on the peer's ATT channel
/// (truncated, oversized, pipelined, unknown opcodes) over a real L2CAP channel on the virtual link,
/// as fast as its controller takes them (with immediate timing, every packet is delivered and its
/// buffer returned within the call that sends it).
///
/// What comes back is reassembled into L2CAP PDUs by channel; ATT PDUs are kept in arrival order.
final class RawATTCentral: Sendable {
    struct State {
        var handle: UInt16?
        var credits = 0
        var bufferLength = 27
        var reassembly: [UInt8] = []
        var att: [[UInt8]] = []
        var otherChannels: [(channel: UInt16, payload: [UInt8])] = []
        var disconnection: UInt8?
        /// Packets that had to be sent without a free controller buffer (a bug in this host).
        var overruns = 0
        /// Tasks in `waitForATT(count:)`.
        var attWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    let controller: VirtualController
    private let state = Mutex(State())

    init(link: VirtualLink, publicAddress: BluetoothAddress) {
        controller = link.addController(publicAddress: publicAddress)
    }

    enum ConnectError: Error {
        case noConnection([HCIPacket])
    }

    /// Reset, Set Event Mask (with LE Meta), LE Read Buffer Size, then LE Create Connection to
    /// `peer` (an advertising random address). Returns the connection handle.
    @discardableResult
    func connect(to peer: BluetoothAddress) throws -> UInt16 {
        var output = controller.receive(hostPacket: Self.command(0x0C03, []))
        // Set Event Mask: the defaults plus LE Meta (bit 61).
        output += controller.receive(hostPacket: Self.command(0x0C01, Self.littleEndian(0x2000_1FFF_FFFF_FFFF, bytes: 8)))
        output += controller.receive(hostPacket: Self.command(0x2002, []))
        var parameters: [UInt8] = []
        parameters += Self.littleEndian(0x0060, bytes: 2) + Self.littleEndian(0x0030, bytes: 2)  // scan interval, window
        parameters += [0x00, 0x01] + peer.littleEndianBytes                                       // no filter, random peer
        parameters += [0x00]                                                                      // own address: public
        parameters += Self.littleEndian(0x0018, bytes: 2) + Self.littleEndian(0x0028, bytes: 2)   // interval min, max
        parameters += Self.littleEndian(0, bytes: 2) + Self.littleEndian(0x01F4, bytes: 2)        // latency, 5 s timeout
        parameters += Self.littleEndian(0, bytes: 4)                                              // CE lengths
        output += controller.receive(hostPacket: Self.command(0x200D, parameters))
        for packet in output where packet.type == .event {
            let bytes = Array(packet.payload)
            // Command Complete of LE Read Buffer Size: length (u16) and count (u8) of LE ACL buffers.
            if bytes.count >= 9, bytes[0] == 0x0E, bytes[3] == 0x02, bytes[4] == 0x20, bytes[5] == 0x00 {
                state.withLock {
                    $0.bufferLength = Int(bytes[6]) | Int(bytes[7]) << 8
                    $0.credits = Int(bytes[8])
                }
            }
            // LE Connection Complete, success.
            if bytes.count >= 6, bytes[0] == 0x3E, bytes[2] == 0x01, bytes[3] == 0x00 {
                let handle = UInt16(bytes[4]) | UInt16(bytes[5]) << 8
                state.withLock { $0.handle = handle }
            }
        }
        guard let handle = state.withLock({ $0.handle }) else { throw ConnectError.noConnection(output) }
        // Weak: the link keeps the handler, and the central keeps the controller (and so the link); a
        // strong capture made a cycle that kept the whole bench (link, clock, hosts' transports) alive.
        controller.setOutputHandler { [weak self] packet in self?.receive(packet) }
        return handle
    }

    /// Sends `payload` as one L2CAP PDU on `channel` (ATT is 0x0004), in as many ACL packets as the
    /// controller's buffer length asks for.
    func send(_ payload: [UInt8], channel: UInt16 = 0x0004) {
        guard let handle = state.withLock({ $0.handle }) else { return }
        let frame = Self.littleEndian(UInt64(payload.count), bytes: 2) + Self.littleEndian(UInt64(channel), bytes: 2) + payload
        let length = state.withLock { $0.bufferLength }
        var start = 0
        repeat {
            let end = min(start + length, frame.count)
            let boundary: UInt16 = start == 0 ? 0b00 : 0b01
            var packet = Self.littleEndian(UInt64(handle | boundary << 12), bytes: 2)
            packet += Self.littleEndian(UInt64(end - start), bytes: 2) + frame[start..<end]
            state.withLock { state in
                if state.credits == 0 { state.overruns += 1 }
                state.credits -= 1
            }
            controller.receive(hostPacket: HCIPacket(type: .acl, payload: packet))
            start = end
        } while start < frame.count
    }

    /// Sends one ACL packet carrying `data` as it is (an L2CAP frame or a piece of one, true or not),
    /// flagged as the start of a PDU or a continuing fragment.
    func sendACL(_ data: [UInt8], start: Bool) {
        guard let handle = state.withLock({ $0.handle }) else { return }
        let boundary: UInt16 = start ? 0b00 : 0b01
        let packet = Self.littleEndian(UInt64(handle | boundary << 12), bytes: 2) + Self.littleEndian(UInt64(data.count), bytes: 2) + data
        state.withLock { state in
            if state.credits == 0 { state.overruns += 1 }
            state.credits -= 1
        }
        controller.receive(hostPacket: HCIPacket(type: .acl, payload: packet))
    }

    /// ATT PDUs received so far, in order.
    var receivedATT: [[UInt8]] { state.withLock { $0.att } }
    var receivedATTCount: Int { state.withLock { $0.att.count } }

    /// Returns once `count` ATT PDUs have arrived (at once if they have): each is reassembled in
    /// `receive`, which resumes the waiters it satisfies.
    func waitForATT(count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let arrived = state.withLock { state in
                if state.att.count >= count { return true }
                state.attWaiters.append((count, continuation))
                return false
            }
            if arrived { continuation.resume() }
        }
    }
    /// L2CAP PDUs received on other channels (LE signaling...).
    var receivedOnOtherChannels: [(channel: UInt16, payload: [UInt8])] { state.withLock { $0.otherChannels } }
    var disconnectionReason: UInt8? { state.withLock { $0.disconnection } }
    var overruns: Int { state.withLock { $0.overruns } }

    /// Runs with the link locked: only this object's state is touched.
    private func receive(_ packet: HCIPacket) {
        let bytes = Array(packet.payload)
        state.withLock { state in
            switch packet.type {
            case .event where bytes.first == 0x13 && bytes.count >= 3:
                // Number Of Completed Packets: handle/count pairs.
                for index in 0..<Int(bytes[2]) where bytes.count >= 3 + index * 4 + 4 {
                    state.credits += Int(bytes[3 + index * 4 + 2]) | Int(bytes[3 + index * 4 + 3]) << 8
                }
            case .event where bytes.first == 0x05 && bytes.count >= 6:
                state.disconnection = bytes[5]
            case .acl where bytes.count >= 4:
                let boundary = (bytes[1] >> 4) & 0b11
                let data = bytes[4...]
                if boundary == 0b01 { state.reassembly += data } else { state.reassembly = Array(data) }
                guard state.reassembly.count >= 4 else { return }
                let length = Int(state.reassembly[0]) | Int(state.reassembly[1]) << 8
                guard state.reassembly.count >= 4 + length else { return }
                let channel = UInt16(state.reassembly[2]) | UInt16(state.reassembly[3]) << 8
                let payload = Array(state.reassembly[4..<(4 + length)])
                state.reassembly = []
                if channel == 0x0004 {
                    state.att.append(payload)
                    let count = state.att.count
                    for waiter in state.attWaiters where count >= waiter.count { waiter.continuation.resume() }
                    state.attWaiters.removeAll { count >= $0.count }
                } else {
                    state.otherChannels.append((channel, payload))
                }
            default:
                break
            }
        }
    }

    static func command(_ opcode: UInt16, _ parameters: [UInt8]) -> HCIPacket {
        HCIPacket(type: .command, payload: littleEndian(UInt64(opcode), bytes: 2) + [UInt8(parameters.count)] + parameters)
    }

    static func littleEndian(_ value: UInt64, bytes: Int) -> [UInt8] {
        (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
}

extension BluetoothAddress {
    /// The address as HCI carries it, least significant byte first.
    var littleEndianBytes: [UInt8] { RawATTCentral.littleEndian(value, bytes: 6) }
}
