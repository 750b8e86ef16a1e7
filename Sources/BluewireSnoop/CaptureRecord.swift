import BluewireCore

/// One record of a capture file: an HCI packet, or a note about something that is not an HCI packet.
///
/// Its bytes are slices of the chunk the reader was fed, so records cost no copies. Fields are kept as
/// the file has them: timestamps are never validated or reordered (captures jump backwards and start at
/// odd epochs), and lengths and drop counts are reported, not corrected.
public struct CaptureRecord: Sendable {
    /// What the record holds.
    public enum Content: Sendable {
        /// An HCI packet to decode or replay.
        case packet(HCIPacket)
        /// Something else: a monitor index/system/logging record, an empty record, an unknown packet type.
        case note(CaptureNote)
    }

    /// Position among the records of the file, from 0 (pcapng: among its packet blocks).
    public var index: Int
    /// Byte offset of the record (btsnoop) or block (pcapng) from the start of the file.
    public var offset: Int
    /// Which way the packet crossed the HCI.
    public var direction: PacketDirection
    /// Microseconds as the file has them: btsnoop counts from year 0 (see `CaptureFormat.unixMicroseconds`),
    /// pcapng records are converted from the interface's resolution to Unix microseconds.
    public var timestamp: Int64
    /// The packet's length on the wire; larger than `data.count` when the writer truncated the packet.
    public var originalLength: UInt32
    /// Packets lost between the previous record and this one, as the file reports (btsnoop: cumulative).
    public var drops: UInt32
    /// The record's flags word as stored (btsnoop flags; pcapng `epb_flags`, 0 when absent).
    public var flags: UInt32
    /// Every included byte of the record, as stored (for 1002 and pcapng, the H4 byte first).
    public var data: ArraySlice<UInt8>
    public var content: Content

    @inlinable
    public init(
        index: Int, offset: Int, direction: PacketDirection, timestamp: Int64, originalLength: UInt32,
        drops: UInt32, flags: UInt32, data: ArraySlice<UInt8>, content: Content
    ) {
        self.index = index
        self.offset = offset
        self.direction = direction
        self.timestamp = timestamp
        self.originalLength = originalLength
        self.drops = drops
        self.flags = flags
        self.data = data
        self.content = content
    }

    /// The HCI packet, if the record holds one.
    @inlinable
    public var packet: HCIPacket? {
        if case .packet(let packet) = content { return packet }
        return nil
    }

    /// The note, if the record holds no HCI packet.
    @inlinable
    public var note: CaptureNote? {
        if case .note(let note) = content { return note }
        return nil
    }

    /// Whether the file kept fewer bytes than the packet had (Android "filtered" snoop logs do this).
    @inlinable
    public var isTruncatedPacket: Bool { Int(originalLength) > data.count }
}

/// A record that carries no HCI packet for the stack.
///
/// The Linux monitor format interleaves index, system-note, logging and management-socket records with
/// HCI traffic; they must never be fed to an HCI decoder or a replayer.
public struct CaptureNote: Sendable {
    public enum Kind: Sendable, Equatable {
        /// A Linux monitor record that is not HCI traffic (New Index, System Note, User Logging, MGMT...).
        case monitor(BTSnoopMonitorOpcode, controllerIndex: UInt16)
        /// A record with no bytes at all (no packet type byte).
        case emptyRecord
        /// An H4 packet indicator that is none of command, ACL, SCO, event, ISO.
        case unknownPacketType(UInt8)
        /// A btsnoop datalink Bluewire does not decode (BCSP, H5, simulator, unknown).
        case unsupportedDatalink(UInt32)
        /// A pcapng interface whose link type is not a Bluetooth HCI one Bluewire decodes.
        case unsupportedLinkType(UInt32)
        /// A pcapng packet naming an interface that was never described.
        case unknownInterface(UInt32)
        /// A packet block whose inner fields are inconsistent; the block framing itself was intact.
        case malformed(DecodeError)
    }

    public var kind: Kind
    /// The record's payload (for monitor notes: the monitor payload, e.g. the text of a System Note).
    public var data: ArraySlice<UInt8>

    @inlinable
    public init(kind: Kind, data: ArraySlice<UInt8>) {
        self.kind = kind
        self.data = data
    }
}

/// The opcode of a Linux monitor record (btsnoop 2001 flags low 16 bits; BlueZ `monitor/bt.h`).
public struct BTSnoopMonitorOpcode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let newIndex = BTSnoopMonitorOpcode(rawValue: 0)
    public static let deletedIndex = BTSnoopMonitorOpcode(rawValue: 1)
    public static let commandPacket = BTSnoopMonitorOpcode(rawValue: 2)
    public static let eventPacket = BTSnoopMonitorOpcode(rawValue: 3)
    public static let aclTXPacket = BTSnoopMonitorOpcode(rawValue: 4)
    public static let aclRXPacket = BTSnoopMonitorOpcode(rawValue: 5)
    public static let scoTXPacket = BTSnoopMonitorOpcode(rawValue: 6)
    public static let scoRXPacket = BTSnoopMonitorOpcode(rawValue: 7)
    public static let openIndex = BTSnoopMonitorOpcode(rawValue: 8)
    public static let closeIndex = BTSnoopMonitorOpcode(rawValue: 9)
    public static let indexInfo = BTSnoopMonitorOpcode(rawValue: 10)
    public static let vendorDiagnostic = BTSnoopMonitorOpcode(rawValue: 11)
    public static let systemNote = BTSnoopMonitorOpcode(rawValue: 12)
    public static let userLogging = BTSnoopMonitorOpcode(rawValue: 13)
    public static let controlOpen = BTSnoopMonitorOpcode(rawValue: 14)
    public static let controlClose = BTSnoopMonitorOpcode(rawValue: 15)
    public static let controlCommand = BTSnoopMonitorOpcode(rawValue: 16)
    public static let controlEvent = BTSnoopMonitorOpcode(rawValue: 17)
    public static let isoTXPacket = BTSnoopMonitorOpcode(rawValue: 18)
    public static let isoRXPacket = BTSnoopMonitorOpcode(rawValue: 19)

    /// The HCI packet type and direction this opcode carries, or nil for non-HCI records.
    @inlinable
    public var hciPacket: (type: HCIPacketType, direction: PacketDirection)? {
        switch rawValue {
        case 2: return (.command, .hostToController)
        case 3: return (.event, .controllerToHost)
        case 4: return (.acl, .hostToController)
        case 5: return (.acl, .controllerToHost)
        case 6: return (.sco, .hostToController)
        case 7: return (.sco, .controllerToHost)
        case 18: return (.iso, .hostToController)
        case 19: return (.iso, .controllerToHost)
        default: return nil
        }
    }

    public var description: String {
        switch rawValue {
        case 0: return "New Index"
        case 1: return "Deleted Index"
        case 2: return "Command"
        case 3: return "Event"
        case 4: return "ACL TX"
        case 5: return "ACL RX"
        case 6: return "SCO TX"
        case 7: return "SCO RX"
        case 8: return "Open Index"
        case 9: return "Close Index"
        case 10: return "Index Info"
        case 11: return "Vendor Diagnostic"
        case 12: return "System Note"
        case 13: return "User Logging"
        case 14: return "Control Open"
        case 15: return "Control Close"
        case 16: return "Control Command"
        case 17: return "Control Event"
        case 18: return "ISO TX"
        case 19: return "ISO RX"
        default: return "Monitor opcode \(rawValue)"
        }
    }
}
