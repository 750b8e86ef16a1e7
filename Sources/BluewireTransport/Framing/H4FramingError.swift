import BluewireCore

/// The byte stream from a controller is not valid H4 (Core Vol 4 Part A §2): the stream has lost
/// packet boundaries and cannot be resynchronised, so the transport closes after reporting this.
public struct H4FramingError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable {
        /// The packet indicator is none of command, ACL, SCO, event, ISO.
        case unknownPacketType
        /// The header declares a payload longer than the framer accepts.
        case lengthTooLarge(declared: Int, maximum: Int)
        /// The stream ended inside a packet: `needed` more bytes were expected.
        case endedMidPacket(needed: Int)
    }

    public var reason: Reason
    /// The packet indicator byte of the packet in error.
    public var packetType: UInt8
    /// Offset of that indicator byte from the start of the stream.
    public var offset: Int

    public init(_ reason: Reason, packetType: UInt8, offset: Int) {
        self.reason = reason
        self.packetType = packetType
        self.offset = offset
    }

    public var description: String {
        let what: String
        switch reason {
        case .unknownPacketType:
            what = "unknown H4 packet type 0x\(hex(packetType, width: 2))"
        case .lengthTooLarge(let declared, let maximum):
            what = "packet type 0x\(hex(packetType, width: 2)) declares \(declared) byte(s), more than \(maximum)"
        case .endedMidPacket(let needed):
            what = "stream ended inside a packet of type 0x\(hex(packetType, width: 2)), \(needed) byte(s) missing"
        }
        return "h4: \(what) at stream offset \(offset)"
    }
}
