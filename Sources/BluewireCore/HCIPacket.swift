/// The HCI packet indicator (the H4 type byte, Core Vol 4 Part A §2).
///
/// Shared by the capture formats, the transports and the HCI layer.
public enum HCIPacketType: UInt8, Sendable, Hashable, CaseIterable {
    case command = 0x01
    case acl = 0x02
    case sco = 0x03
    case event = 0x04
    case iso = 0x05
}

/// Which way a packet crossed the host–controller interface.
public enum PacketDirection: UInt8, Sendable, Hashable {
    case hostToController = 0
    case controllerToHost = 1
}

/// One HCI packet: its type and its bytes after the H4 indicator.
///
/// `payload` is a slice; it usually shares the storage of a larger buffer (a capture chunk or a
/// transport read), so passing packets around does not copy them.
public struct HCIPacket: Sendable, Hashable {
    public var type: HCIPacketType
    public var payload: ArraySlice<UInt8>

    @inlinable
    public init(type: HCIPacketType, payload: ArraySlice<UInt8>) {
        self.type = type
        self.payload = payload
    }

    @inlinable
    public init(type: HCIPacketType, payload: [UInt8]) {
        self.init(type: type, payload: payload[...])
    }

    /// The packet with its H4 indicator byte first, as sent over a UART or a stream.
    @inlinable
    public var h4Bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(payload.count + 1)
        out.append(type.rawValue)
        out.append(contentsOf: payload)
        return out
    }
}
