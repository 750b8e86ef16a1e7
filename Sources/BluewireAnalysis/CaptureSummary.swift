import BluewireCore
import BluewireSnoop

/// Per-kind packet counts of a capture, defined so that they can be compared with tshark's.
///
/// Each count is what the matching tshark display filter counts (see `Captures/README.md`):
/// HCI packets by H4 type; LE Meta events by subevent; advertising reports both per event and summed
/// over Num_Reports (one event can carry several reports); connection events in total and with
/// Status 0x00 (failed and cancelled attempts are common); ATT, SMP and LE signaling per complete L2CAP
/// PDU, counted on the ACL packet that completes it, on every connection handle (tshark decodes fixed
/// channels on BR/EDR handles too).
///
/// Feeding a record costs no allocation: histograms are fixed tables and L2CAP reassembly reuses its
/// buffers.
public struct CaptureSummary: Sendable {
    public var frames = 0
    public var hciCommandFrames = 0
    public var hciEventFrames = 0
    public var hciACLFrames = 0
    public var hciSCOFrames = 0
    public var hciISOFrames = 0
    /// Records that hold no HCI packet (monitor notes, unknown packet types, ...).
    public var noteFrames = 0
    public var leMetaSubevents = ByteHistogram()
    public var leAdvertisingReportFrames = 0
    public var leAdvertisingReportsTotal = 0
    public var leExtendedAdvertisingReportFrames = 0
    public var leExtendedAdvertisingReportsTotal = 0
    /// LE Connection Complete (0x01) and LE Enhanced Connection Complete v1 (0x0A) and v2 (0x29) events.
    /// tshark's filter names only 0x01 and 0x0A; v2 is the same event with two more fields, so it
    /// counts too (none of the reference captures has one).
    public var leConnectionCompleteEvents = 0
    public var leConnectionCompleteOK = 0
    /// BR/EDR Connection Complete events (event code 0x03).
    public var classicConnectionCompleteEvents = 0
    public var classicConnectionCompleteOK = 0
    public var disconnectionComplete = 0
    public var leDataLengthChange = 0
    public var lePHYUpdateComplete = 0
    public var attFrames = 0
    public var attOpcodes = ByteHistogram()
    public var smpFrames = 0
    public var l2capLESignalingFrames = 0

    var reassembler = CaptureL2CAPReassembler()

    public init() {}

    /// Counts one record.
    public mutating func add(_ record: CaptureRecord) {
        frames &+= 1
        switch record.content {
        case .note:
            noteFrames &+= 1
        case .packet(let packet):
            switch packet.type {
            case .command: hciCommandFrames &+= 1
            case .event: addEvent(packet.payload)
            case .acl: addACL(packet.payload, direction: record.direction, recordIndex: record.index)
            case .sco: hciSCOFrames &+= 1
            case .iso: hciISOFrames &+= 1
            }
        }
    }

    mutating func addEvent(_ event: ArraySlice<UInt8>) {
        hciEventFrames &+= 1
        // Fields count when their bytes are present, whatever the Parameter_Total_Length says:
        // that is how a dissector reading a truncated event behaves.
        let count = event.count
        guard count >= 1 else { return }
        let s = event.startIndex
        switch event[s] {
        case 0x03:
            classicConnectionCompleteEvents &+= 1
            if count >= 3 && event[s &+ 2] == 0 { classicConnectionCompleteOK &+= 1 }
        case 0x05:
            disconnectionComplete &+= 1
        case 0x3E:
            guard count >= 3 else { return }
            let subevent = event[s &+ 2]
            leMetaSubevents.add(subevent)
            let fourth: UInt8? = count >= 4 ? event[s &+ 3] : nil
            switch subevent {
            case 0x01, 0x0A, 0x29:
                leConnectionCompleteEvents &+= 1
                if fourth == 0 { leConnectionCompleteOK &+= 1 }
            case 0x02:
                leAdvertisingReportFrames &+= 1
                leAdvertisingReportsTotal &+= Int(fourth ?? 0)
            case 0x0D:
                leExtendedAdvertisingReportFrames &+= 1
                leExtendedAdvertisingReportsTotal &+= Int(fourth ?? 0)
            case 0x07:
                leDataLengthChange &+= 1
            case 0x0C:
                lePHYUpdateComplete &+= 1
            default:
                break
            }
        default:
            break
        }
    }

    mutating func addACL(_ packet: ArraySlice<UInt8>, direction: PacketDirection, recordIndex: Int) {
        hciACLFrames &+= 1
        guard case .complete(let pdu) = reassembler.push(packet, direction: direction, recordIndex: recordIndex),
              let channel = pdu.channelID else { return }
        switch channel {
        case 0x0004:
            attFrames &+= 1
            if let opcode = pdu.payload.first { attOpcodes.add(opcode) }
        case 0x0005:
            l2capLESignalingFrames &+= 1
        case 0x0006:
            smpFrames &+= 1
        default:
            break
        }
    }
}

/// Counts per byte value (an opcode or subevent code), in a fixed table.
public struct ByteHistogram: Sendable, Equatable {
    public private(set) var counts: [Int] = Array(repeating: 0, count: 256)

    public init() {}

    @inlinable
    public subscript(value: UInt8) -> Int { counts[Int(value)] }

    public mutating func add(_ value: UInt8) {
        counts[Int(value)] &+= 1
    }

    /// The values seen, in increasing order, with their counts.
    public var entries: [(value: UInt8, count: Int)] {
        var out: [(value: UInt8, count: Int)] = []
        for value in 0..<256 where counts[value] > 0 { out.append((UInt8(value), counts[value])) }
        return out
    }
}
