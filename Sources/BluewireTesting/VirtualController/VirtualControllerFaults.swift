import BluewireCore

extension VirtualController {
    /// Faults a test can switch on to see how a host copes.
    public struct Faults: Sendable, Hashable {
        /// The controller ignores everything from its host and sends nothing (a hung controller).
        public var isUnresponsive = false
        /// Commands with these opcodes are swallowed without any answer (a command timeout must fire).
        public var silentOpcodes: Set<UInt16> = []
        /// After this many more ACL packets from the host have been sent over the air, the link is lost:
        /// later packets go nowhere and both sides see Disconnection Complete with Connection Timeout
        /// (0x08) once the supervision timeout has passed in virtual time. Cleared when it fires.
        public var dropLinkAfterACLPackets: Int?

        public init() {}
    }

    /// Something the host did that the Core specification forbids. A real controller would misbehave
    /// (overrun a buffer, desynchronise); the virtual one records it, tells the test through the
    /// violation handler, and drops the offending packet.
    public enum HostViolation: Sendable, Hashable, CustomStringConvertible {
        /// An ACL packet arrived while all LE ACL buffers were in use (Core Vol 4 Part E §4.1.1); the
        /// controller also sends Data Buffer Overflow.
        case aclBufferOverflow(handle: UInt16, buffersInUse: Int)
        /// An ACL packet longer than the controller's LE ACL buffer.
        case aclPacketTooLong(handle: UInt16, length: Int, maximum: Int)
        /// An ACL packet on a handle with no connection; `payload` is what it carried (the L2CAP
        /// fragment), so a report says which PDU came too late. A packet on a handle that ended
        /// moments ago is not one when its host cannot have known yet (`lateACLPackets`): only a
        /// packet beyond what the host's buffer credits allowed it to send before it read the
        /// Disconnection Complete, or on a handle that never existed, is.
        case aclUnknownHandle(handle: UInt16, payload: [UInt8] = [])
        /// An ACL packet whose header or length is malformed, or flagged "complete" (0b11) or broadcast.
        case malformedACLPacket(bytes: [UInt8])
        /// An ACL packet flagged "first automatically flushable" (0b10), which a host must not send on an
        /// LE-U link (Core Vol 4 Part E §5.4.2); the packet is still accepted as a start fragment.
        case automaticallyFlushableOnLE(handle: UInt16)
        /// A command packet whose header or parameter length is wrong.
        case malformedCommand(bytes: [UInt8])
        /// A packet type a host never sends to a controller (events) or that LE does not carry.
        case unexpectedPacketType(UInt8)

        public var description: String {
            switch self {
            case .aclBufferOverflow(let handle, let inUse):
                return "ACL buffer overflow on handle 0x\(hex(handle, width: 4)) with \(inUse) buffers in use"
            case .aclPacketTooLong(let handle, let length, let maximum):
                return "ACL packet of \(length) bytes on handle 0x\(hex(handle, width: 4)) exceeds the \(maximum)-byte buffer"
            case .aclUnknownHandle(let handle, let payload):
                return "ACL packet on unknown handle 0x\(hex(handle, width: 4))" + (payload.isEmpty ? "" : ": \(hexString(payload))")
            case .automaticallyFlushableOnLE(let handle):
                return "automatically flushable ACL packet (PB 0b10) on LE handle 0x\(hex(handle, width: 4))"
            case .malformedACLPacket(let bytes):
                return "malformed ACL packet \(hexString(bytes))"
            case .malformedCommand(let bytes):
                return "malformed command \(hexString(bytes))"
            case .unexpectedPacketType(let type):
                return "unexpected packet type 0x\(hex(type, width: 2)) from the host"
            }
        }
    }
}

extension VirtualController {
    /// An ACL packet that arrived on a handle this controller had already ended, while its
    /// Disconnection Complete was still on its way to the host or unread there. The host cannot avoid
    /// sending it (it learns of the end only from that event, Core Vol 4 Part E §7.7.5), so it is no
    /// violation: a controller drops it, and so does this one.
    public struct LateACLPacket: Sendable, Hashable {
        /// The ended Connection_Handle.
        public var handle: UInt16
        /// What the packet carried (the L2CAP fragment).
        public var payload: [UInt8]

        public init(handle: UInt16, payload: [UInt8]) {
            self.handle = handle
            self.payload = payload
        }
    }
}
