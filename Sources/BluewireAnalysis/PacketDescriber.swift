import BluewireCore
import BluewireSnoop

/// Describes capture records one line at a time, as btmon does: index, time since the first record,
/// direction, packet kind, and what the packet says (command names and key parameters, event names and
/// status, advertising reports, ACL handle, L2CAP channel and the ATT PDU with handles and values).
///
/// It keeps the state a reader needs across records: the first timestamp and the L2CAP reassembly per
/// connection handle and direction, so an ATT PDU split over several ACL packets is shown whole on the
/// packet that completes it. Malformed packets are described as far as they decode, with the error.
public struct PacketDescriber: Sendable {
    var firstTimestamp: Int64?
    var previousTimestamp: Int64?
    var reassembler = CaptureL2CAPReassembler()
    /// Credit based channels opened so far, to tell their K-frames apart.
    var channels = CreditBasedChannelTracker()

    /// How the time column reads.
    public enum TimeFormat: Sendable, Equatable {
        /// Seconds since the first record (btmon's default offset).
        case relative
        /// Seconds since the previous record.
        case delta
        /// UTC date and time of day (needs `format`).
        case absolute
    }

    public var timeFormat: TimeFormat = .relative
    /// The capture's container: turns timestamps into Unix time, and for Linux monitor captures
    /// (btsnoop datalink 2001) makes every line carry its controller index.
    public var format: CaptureFormat?

    public init() {}

    public init(format: CaptureFormat?, timeFormat: TimeFormat = .relative) {
        self.format = format
        self.timeFormat = timeFormat
    }

    var isMonitor: Bool {
        if case .btsnoop(let datalink)? = format { return datalink == .linuxMonitor }
        return false
    }

    /// The description of `record` (call in capture order).
    public mutating func description(of record: CaptureRecord) -> PacketDescription {
        var d = decode(record)
        d.deltaTime = record.timestamp &- (previousTimestamp ?? record.timestamp)
        previousTimestamp = record.timestamp
        if let format { d.unixTime = format.unixMicroseconds(record.timestamp) }
        switch timeFormat {
        case .relative: break
        case .delta: d.timeText = PacketDescription.seconds(d.deltaTime)
        case .absolute: d.timeText = d.unixTime.map(UTCTime.text) ?? PacketDescription.seconds(d.relativeTime)
        }
        if isMonitor {
            if case .note(let note) = record.content, case .monitor(_, let index) = note.kind {
                d.controllerIndex = index == 0xFFFF ? nil : index
            } else if record.packet != nil {
                d.controllerIndex = UInt16(truncatingIfNeeded: record.flags >> 16)
            }
        }
        return d
    }

    mutating func decode(_ record: CaptureRecord) -> PacketDescription {
        let first = firstTimestamp ?? record.timestamp
        if firstTimestamp == nil { firstTimestamp = first }
        let relative = record.timestamp &- first
        switch record.content {
        case .note(let note):
            var d = PacketDescription(index: record.index, relativeTime: relative, direction: nil, kind: "Note")
            NoteDescription.describe(note, into: &d)
            return d
        case .packet(let packet):
            switch packet.type {
            case .command:
                var d = PacketDescription(index: record.index, relativeTime: relative, direction: record.direction,
                                          kind: "HCI Command")
                HCICommandDescription.describe(packet.payload, into: &d)
                return d
            case .event:
                var d = PacketDescription(index: record.index, relativeTime: relative, direction: record.direction,
                                          kind: "HCI Event")
                HCIEventDescription.describe(packet.payload, into: &d)
                return d
            case .acl:
                var d = PacketDescription(index: record.index, relativeTime: relative, direction: record.direction,
                                          kind: "ACL")
                ACLDescription.describe(packet.payload, direction: record.direction, recordIndex: record.index,
                                        reassembler: &reassembler, channels: &channels, into: &d)
                return d
            case .sco, .iso:
                var d = PacketDescription(index: record.index, relativeTime: relative, direction: record.direction,
                                          kind: packet.type == .sco ? "SCO" : "ISO")
                IsochronousDescription.describe(packet.payload, sco: packet.type == .sco, into: &d)
                return d
            }
        }
    }

    /// The btmon-like text line for `record`.
    public mutating func describe(_ record: CaptureRecord) -> String {
        description(of: record).line
    }

    /// The JSON object (one line, no newline) for `record`.
    public mutating func jsonLine(_ record: CaptureRecord) -> String {
        description(of: record).json
    }
}

/// SCO and ISO data: handle and length only (Core Vol 4 Part E §5.4.3, §5.4.5).
enum IsochronousDescription {
    static func describe(_ packet: ArraySlice<UInt8>, sco: Bool, into d: inout PacketDescription) {
        let headerLength = sco ? 3 : 4
        guard packet.count >= headerLength else {
            d.fail(DecodeError(.truncated(needed: headerLength, available: packet.count), layer: "hci",
                               field: sco ? "SCO header" : "ISO header", offset: 0))
            return
        }
        let s = packet.startIndex
        d.addHex("handle", UInt16(packet[s]) | UInt16(packet[s &+ 1] & 0x0F) << 8)
        d.add("dlen", packet.count - headerLength)
    }
}

/// Records that are not HCI packets (Linux monitor index/system/logging records and the like).
enum NoteDescription {
    static func describe(_ note: CaptureNote, into d: inout PacketDescription) {
        switch note.kind {
        case .monitor(let opcode, _):
            d.say(opcode.description)
            switch opcode {
            case .systemNote:
                addText("text", text(note.data), into: &d)
            case .userLogging:
                // priority (1), ident length (1), ident (NUL-terminated), message (NUL-terminated).
                let data = note.data
                if data.count >= 2 {
                    let identLength = Int(data[data.startIndex &+ 1])
                    let identStart = data.startIndex &+ 2
                    let identEnd = min(identStart &+ identLength, data.endIndex)
                    d.add("priority", data[data.startIndex])
                    addText("ident", text(data[identStart..<identEnd]), into: &d)
                    addText("text", text(data[identEnd...]), into: &d)
                }
            case .newIndex:
                // type (1), bus (1), address (6), name (8).
                let data = note.data
                if data.count >= 8 {
                    var reader = ByteReader(data, layer: "monitor")
                    _ = try? reader.skip(2, "type and bus")
                    if let address = try? reader.readAddress(type: .public, "address") {
                        d.add("address", address.description)
                    }
                    addText("name", text(reader.readRemaining()), into: &d)
                }
            default:
                if !note.data.isEmpty { d.add("data", hexString(note.data.prefix(32))) }
            }
        case .emptyRecord:
            d.say("Empty record")
        case .unknownPacketType(let type):
            d.say("Unknown packet type 0x" + hex(type, width: 2))
            d.add("data", hexString(note.data.prefix(32)))
        case .unsupportedDatalink(let datalink):
            d.say("Record of unsupported datalink " + String(datalink))
        case .unsupportedLinkType(let linkType):
            d.say("Packet of unsupported link type " + String(linkType))
        case .unknownInterface(let interface):
            d.say("Packet on undescribed interface " + String(interface))
        case .malformed(let error):
            d.say("Malformed packet block")
            d.fail(error)
        }
    }

    /// Adds free text from the capture as a field, shown quoted and escaped (as device names are), so
    /// that a note cannot break the one-line-per-record output or send escape sequences to a terminal.
    static func addText(_ name: String, _ value: String, into d: inout PacketDescription) {
        d.add(name, value, shown: false)
        d.say(name + "=" + JSONWriter.quoted(value))
    }

    /// Text up to the first NUL, with invalid UTF-8 replaced.
    static func text(_ bytes: ArraySlice<UInt8>) -> String {
        let end = bytes.firstIndex(of: 0) ?? bytes.endIndex
        return String(decoding: bytes[bytes.startIndex..<end], as: UTF8.self)
    }
}
