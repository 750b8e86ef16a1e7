import BluewireCore

/// One HCI ACL Data packet in its wire form (Core Vol 4 Part E §5.4.2: the 4-octet header, then the
/// data; no H4 indicator), as the host queues it for the controller.
///
/// The host builds an outgoing packet's bytes once, header included, and hands that array to the
/// transport as it is. An `ACLPacket` (header and a slice of data) would be encoded into a new array
/// when sent; building the wire form at once saves that copy and the intermediate frame buffer, on
/// every packet a host sends.
public struct ACLWirePacket: Hashable, Sendable {
    /// The header and the data.
    public let bytes: [UInt8]

    /// `packet` encoded.
    @inlinable
    public init(_ packet: ACLPacket) {
        bytes = packet.encode()
    }

    /// Bytes that already hold a header and exactly `Data_Total_Length` data octets (the L2CAP
    /// fragmenter and the engine's hot paths build them so). Not checked, so not public: only the
    /// stack's own encoders make packets this way.
    @inlinable
    package init(encoded bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Connection_Handle (12 bits).
    @inlinable
    public var handle: UInt16 { (UInt16(bytes[0]) | UInt16(bytes[1]) << 8) & 0x0FFF }

    /// Packet_Boundary_Flag.
    @inlinable
    public var packetBoundary: ACLPacketBoundaryFlag {
        ACLPacketBoundaryFlag(rawValue: (bytes[1] >> 4) & 0b11) ?? .continuingFragment
    }

    /// The data octets after the header.
    @inlinable
    public var data: ArraySlice<UInt8> { bytes[ACLHeader.size...] }
}
