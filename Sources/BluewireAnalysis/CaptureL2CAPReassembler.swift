import BluewireCore
import BluewireHCI

/// Reassembles L2CAP PDUs from HCI ACL fragments of a capture for display and counting, per connection
/// handle and direction (Core Vol 4 Part E §5.4.2: a PDU starts with a packet whose Packet_Boundary_Flag is 0b00
/// or 0b10 and continues with 0b01 packets; the L2CAP Length field says when it is complete).
///
/// It follows the rules Wireshark's ACL dissector applies, so that per-PDU counts can be compared
/// with tshark's: a start packet whose L2CAP length matches the ACL length is a complete PDU at once;
/// a start packet carrying more bytes than its L2CAP length announces starts nothing (and an older
/// unfinished PDU on that link stays open); a continuation is appended only if it fits, and the PDU is
/// delivered on the packet that completes it. Continuations with no open PDU (a capture that starts
/// mid-PDU) are dropped.
///
/// Buffers are kept per link and reused, so after the first PDUs nothing is allocated per packet.
///
/// The live stack uses `BluewireL2CAP.L2CAPReassembler`, which enforces the specification and reports
/// errors; this one reproduces an analyser's view of a recording (including its leniency), so that
/// counts can be checked against tshark.
public struct CaptureL2CAPReassembler: Sendable {
    struct Link: Sendable {
        var handle: UInt16
        var direction: PacketDirection
        /// Whether an unfinished PDU is open.
        var open = false
        /// L2CAP header + payload length the open PDU needs.
        var total = 0
        var bytes: [UInt8] = []
        /// Index of the record that started the open PDU.
        var firstRecord = 0
    }

    /// A complete L2CAP PDU.
    public struct PDU: Sendable {
        /// The basic L2CAP header and payload: a slice of the ACL packet, or of a reassembly buffer.
        public var bytes: ArraySlice<UInt8>
        /// The record that held the first fragment (equals the current one when not fragmented).
        public var firstRecordIndex: Int
        /// Whether the PDU was put together from several ACL packets.
        public var isReassembled: Bool

        /// The Channel ID, if the header is complete.
        @inlinable
        public var channelID: UInt16? {
            guard bytes.count >= 4 else { return nil }
            let s = bytes.startIndex
            return UInt16(bytes[s &+ 2]) | UInt16(bytes[s &+ 3]) << 8
        }

        /// The information payload after the 4-byte header (empty if the header is incomplete).
        @inlinable
        public var payload: ArraySlice<UInt8> {
            bytes.count >= 4 ? bytes[(bytes.startIndex &+ 4)...] : bytes[bytes.endIndex...]
        }
    }

    /// What one ACL packet did to its link.
    public enum Outcome: Sendable {
        /// The packet holds (or completes) a PDU.
        case complete(PDU)
        /// The packet started a PDU that needs more fragments.
        case started(needed: Int)
        /// The packet was appended to an open PDU that is still incomplete.
        case continued(received: Int, needed: Int)
        /// The packet could not be used (continuation with nothing open, too long, or too short).
        case dropped
    }

    var links: [Link] = []
    /// Links tracked at most; the least recently started is reused beyond this (a corrupt capture can
    /// name thousands of handles).
    public static let maximumLinks = 64

    public init() {}

    /// Feeds one ACL packet (its bytes after the H4 indicator) received in record `recordIndex`.
    public mutating func push(
        _ packet: ArraySlice<UInt8>, direction: PacketDirection, recordIndex: Int
    ) -> Outcome {
        guard packet.count >= 4 else { return .dropped }
        let s = packet.startIndex
        let first = UInt16(packet[s]) | UInt16(packet[s &+ 1]) << 8
        let handle = first & 0x0FFF
        let boundary = (first >> 12) & 0b11
        let declaredLength = Int(UInt16(packet[s &+ 2]) | UInt16(packet[s &+ 3]) << 8)
        let data = packet[(s &+ 4)...]

        if boundary == 0b01 {
            guard let i = linkIndex(handle, direction), links[i].open else { return .dropped }
            guard links[i].bytes.count &+ data.count <= links[i].total else { return .dropped }
            links[i].bytes.append(contentsOf: data)
            if links[i].bytes.count < links[i].total {
                return .continued(received: links[i].bytes.count, needed: links[i].total)
            }
            links[i].open = false
            return .complete(PDU(bytes: links[i].bytes[...], firstRecordIndex: links[i].firstRecord,
                                 isReassembled: true))
        }
        if boundary == 0b11 {
            // Deprecated "complete" flag: treated as a whole PDU.
            return .complete(PDU(bytes: data, firstRecordIndex: recordIndex, isReassembled: false))
        }
        // A start fragment: the L2CAP length decides whether more is to come.
        guard data.count >= 2 else { return .dropped }
        let total = Int(UInt16(data[data.startIndex]) | UInt16(data[data.startIndex &+ 1]) << 8) &+ 4
        if total == declaredLength {
            return .complete(PDU(bytes: data, firstRecordIndex: recordIndex, isReassembled: false))
        }
        guard data.count <= total else { return .dropped }
        let i = linkIndex(handle, direction) ?? addLink(handle, direction)
        links[i].open = true
        links[i].total = total
        links[i].firstRecord = recordIndex
        links[i].bytes.removeAll(keepingCapacity: true)
        // When the ACL length disagrees with an L2CAP PDU that is already whole, Wireshark still waits
        // for a continuation (only an empty one can complete it); so does this.
        links[i].bytes.append(contentsOf: data)
        return .started(needed: total)
    }

    /// Forgets every open PDU on `handle` (after a Disconnection Complete, say).
    public mutating func reset(handle: UInt16) {
        for i in links.indices where links[i].handle == handle { links[i].open = false }
    }

    private func linkIndex(_ handle: UInt16, _ direction: PacketDirection) -> Int? {
        for i in links.indices where links[i].handle == handle && links[i].direction == direction { return i }
        return nil
    }

    private mutating func addLink(_ handle: UInt16, _ direction: PacketDirection) -> Int {
        if links.count < CaptureL2CAPReassembler.maximumLinks {
            links.append(Link(handle: handle, direction: direction))
            return links.count - 1
        }
        // Reuse the link whose open PDU started earliest (or any closed one).
        var victim = 0
        for i in links.indices {
            if !links[i].open { victim = i; break }
            if links[i].firstRecord < links[victim].firstRecord { victim = i }
        }
        links[victim] = Link(handle: handle, direction: direction)
        return victim
    }
}
