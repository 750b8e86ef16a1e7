import BluewireCore
import BluewireTransport

/// HCI Reset (Core Vol 4 Part E §7.3.2): opcode 0x0C03, no parameters.
let hciReset = HCIPacket(type: .command, payload: [0x03, 0x0C, 0x00])
/// Command Complete for Reset with status success, as the H4 bytes after the indicator.
let resetComplete: [UInt8] = [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]

/// What happened first: a packet, the end of the sequence, an error, or the deadline.
enum FirstInbound: Equatable {
    case packet(HCIPacket)
    case finished
    case failed(TransportError)
    case timedOut
}

/// Waits for the next inbound packet, but no longer than `timeout`: the caller-side timeout a Host
/// puts around every command (the transport itself never times out).
func nextInbound(_ transport: any HCITransport, within timeout: Duration) async -> FirstInbound {
    await nextInbound(transport.inbound, within: timeout)
}

/// `nextInbound(_:within:)` on a sequence taken from a transport earlier.
func nextInbound(_ inbound: HCIInboundPackets, within timeout: Duration) async -> FirstInbound {
    await withTaskGroup(of: FirstInbound.self) { group in
        group.addTask {
            var iterator = inbound.makeAsyncIterator()
            do throws(TransportError) {
                guard let packet = try await iterator.next() else { return .finished }
                return .packet(packet)
            } catch {
                return .failed(error)
            }
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return .timedOut
        }
        let first = await group.next() ?? .timedOut
        group.cancelAll()
        return first
    }
}
