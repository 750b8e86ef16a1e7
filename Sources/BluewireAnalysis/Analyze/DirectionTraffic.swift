import BluewireCore

/// Counts of what crossed the HCI in one direction on one connection.
public struct DirectionTraffic: Sendable, Hashable {
    /// HCI ACL Data packets.
    public var aclPackets = 0
    /// ACL data octets (after the 4-octet ACL header).
    public var aclBytes = 0
    /// Complete L2CAP PDUs after reassembly.
    public var l2capPDUs = 0
    /// ATT PDUs (fixed channel 0x0004).
    public var attPDUs = 0
    /// ATT PDU octets, opcode included: the payload the ATT bearer carried.
    public var attBytes = 0
    /// Security Manager PDUs (fixed channel 0x0006).
    public var smpPDUs = 0
    /// LE signaling PDUs (fixed channel 0x0005).
    public var signalingPDUs = 0

    public init() {}

    /// ATT throughput in bits per second over `duration` microseconds; nil when the duration is zero.
    public func attBitsPerSecond(overMicroseconds duration: Int64) -> Int64? {
        guard duration > 0 else { return nil }
        // Double keeps the product from overflowing for long, busy captures.
        let rate = Double(attBytes) * 8_000_000.0 / Double(duration)
        guard rate < 9.0e18 else { return Int64.max }
        return Int64(rate.rounded())
    }
}
