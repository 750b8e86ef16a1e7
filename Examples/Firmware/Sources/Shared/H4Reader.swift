import BluewireCore

/// Reassembles H4 packets (one packet-type octet, then the HCI packet; Core Vol 4 Part A §2) from the
/// UART's octet stream. A controller sends HCI events (type 0x04, 2-octet header with a 1-octet
/// length, Part E §5.4.4) and ACL data (type 0x02, 4-octet header with a 2-octet length, §5.4.2).
/// Any other type octet cannot be framed, so it is skipped (counted in `discarded`) until a known
/// type starts a packet again.
struct H4Reader {
    private var buffer: [UInt8] = []
    private(set) var discarded = 0

    init() { buffer.reserveCapacity(300) }

    /// Adds one octet; returns a packet when it completes one.
    mutating func append(_ octet: UInt8) -> HCIPacket? {
        if buffer.isEmpty {
            guard octet == HCIPacketType.event.rawValue || octet == HCIPacketType.acl.rawValue else {
                discarded += 1
                return nil
            }
        }
        buffer.append(octet)
        guard let total = expectedLength, buffer.count == total else { return nil }
        let type: HCIPacketType = buffer[0] == HCIPacketType.event.rawValue ? .event : .acl
        let packet = HCIPacket(type: type, payload: Array(buffer[1...]))
        buffer.removeAll(keepingCapacity: true)
        return packet
    }

    /// The whole H4 packet's length once its header is in.
    private var expectedLength: Int? {
        if buffer[0] == HCIPacketType.event.rawValue {
            return buffer.count >= 3 ? 3 + Int(buffer[2]) : nil
        }
        return buffer.count >= 5 ? 5 + (Int(buffer[3]) | Int(buffer[4]) << 8) : nil
    }
}
