import BluewireCore
import BluewireHCI
import BluewireTransport
import Logging

/// A transport decorator that logs every packet crossing it at trace level, in the words
/// `BluetoothHost` logs them (`command LE Create Connection (0x200d)`, `< Command Status (0x0f)`),
/// for the sans-I/O `HostEngine` behind `EngineHost`, which does not log itself (Docs/Design.md:
/// the core reads no clock and does no I/O, logging included). `bluewire --verbose` wraps engine
/// commands' transports in it.
///
/// Packets are logged as they are handed to `send` and as the consumer of `inbound` receives them,
/// so the log has the order the host saw. Nothing is decoded beyond the opcode or event code and
/// the ACL connection handle: a malformed packet is logged like any other.
public final class PacketLogTap: HCITransport {
    /// The wrapped transport.
    public let base: any HCITransport
    let logger: Logger

    /// Wraps `base`, logging to `logger` (with `layer` metadata `hci`) when its level is `trace`.
    public init(wrapping base: any HCITransport, logger: Logger) {
        self.base = base
        var logger = logger
        logger[metadataKey: "layer"] = .string("hci")
        self.logger = logger
    }

    public var inbound: HCIInboundPackets {
        let logger = self.logger
        return base.inbound.observing { packet in
            guard logger.logLevel <= .trace else { return }
            logger.trace("\(Self.describe(packet, outbound: false))")
        }
    }

    public func send(_ packet: HCIPacket) async throws(TransportError) {
        if logger.logLevel <= .trace { logger.trace("\(Self.describe(packet, outbound: true))") }
        try await base.send(packet)
    }

    public func close() async { await base.close() }

    /// `command NAME (0xOOOO)` for a command, `< NAME (0xCC)` for an event, `> ACL 0x0040 27 octets`
    /// / `< ACL ...` for data, else the packet type and length.
    static func describe(_ packet: HCIPacket, outbound: Bool) -> String {
        let payload = packet.payload
        let arrow = outbound ? ">" : "<"
        switch packet.type {
        case .command where payload.count >= 2:
            let opcode = UInt16(payload[payload.startIndex]) | UInt16(payload[payload.startIndex + 1]) << 8
            return "command \(HCIOpcode(rawValue: opcode))"
        case .event where !payload.isEmpty:
            return "< \(HCIEventCode(rawValue: payload[payload.startIndex]))"
        case .acl where payload.count >= 2:
            let handle = (UInt16(payload[payload.startIndex]) | UInt16(payload[payload.startIndex + 1]) << 8) & 0x0FFF
            return "\(arrow) ACL 0x\(hex(handle, width: 4)) \(payload.count - 4) octets"
        default:
            return "\(arrow) \(packet.type) packet, \(payload.count) octets"
        }
    }
}
