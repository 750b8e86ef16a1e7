import BluewireCore

extension CaptureReader {
    /// Size of a btsnoop record header: original length, included length, flags, drops (u32 each) and a
    /// 64-bit timestamp, all big-endian.
    static let btsnoopRecordHeaderLength = 24

    mutating func readBTSnoopRecord(_ datalink: BTSnoopDatalink) throws(CaptureError) -> Step {
        let headerLength = CaptureReader.btsnoopRecordHeaderLength
        guard let header = buffer.peek(headerLength) else {
            return needInput(headerLength, "record header")
        }
        let originalLength = header.bigEndianUInt32(at: 0)
        let includedLength = Int(header.bigEndianUInt32(at: 4))
        guard includedLength <= maximumRecordLength else {
            throw fail(.recordTooLarge(length: includedLength, limit: maximumRecordLength), "included length")
        }
        let total = headerLength &+ includedLength
        guard let whole = buffer.peek(total) else {
            return needInput(total, "packet data")
        }
        let flags = header.bigEndianUInt32(at: 8)
        let drops = header.bigEndianUInt32(at: 12)
        let timestamp = Int64(bitPattern: UInt64(header.bigEndianUInt32(at: 16)) << 32
            | UInt64(header.bigEndianUInt32(at: 20)))
        let data = whole[(whole.startIndex &+ headerLength)...]
        let offset = buffer.fileOffset
        buffer.consume(total)

        let (direction, content) = CaptureReader.btsnoopContent(datalink: datalink, flags: flags, data: data)
        return .record(CaptureRecord(
            index: recordCount, offset: offset, direction: direction, timestamp: timestamp,
            originalLength: originalLength, drops: drops, flags: flags, data: data, content: content))
    }

    /// Interprets a record's bytes according to the datalink.
    static func btsnoopContent(
        datalink: BTSnoopDatalink, flags: UInt32, data: ArraySlice<UInt8>
    ) -> (PacketDirection, CaptureRecord.Content) {
        // 1001/1002: bit 0 of the flags is the direction (set = received from the controller).
        let flagDirection: PacketDirection = flags & 1 == 0 ? .hostToController : .controllerToHost
        switch datalink.rawValue {
        case 1002:
            return (flagDirection, h4Content(data))
        case 1001:
            // H1 has no packet indicator: bit 1 marks a command (sent) or event (received), else ACL.
            // SCO cannot be told from ACL in this format.
            let type: HCIPacketType = flags & 2 == 0 ? .acl : (flags & 1 == 0 ? .command : .event)
            return (flagDirection, .packet(HCIPacket(type: type, payload: data)))
        case 2001:
            let opcode = BTSnoopMonitorOpcode(rawValue: UInt16(truncatingIfNeeded: flags))
            let index = UInt16(truncatingIfNeeded: flags >> 16)
            if let hci = opcode.hciPacket {
                return (hci.direction, .packet(HCIPacket(type: hci.type, payload: data)))
            }
            return (.controllerToHost, .note(CaptureNote(kind: .monitor(opcode, controllerIndex: index), data: data)))
        default:
            return (flagDirection, .note(CaptureNote(kind: .unsupportedDatalink(datalink.rawValue), data: data)))
        }
    }

    /// An H4 packet: the indicator byte decides the type, whatever the flags say (some writers set
    /// wrong flags, such as 0x10).
    static func h4Content(_ data: ArraySlice<UInt8>) -> CaptureRecord.Content {
        guard let first = data.first else {
            return .note(CaptureNote(kind: .emptyRecord, data: data))
        }
        guard let type = HCIPacketType(rawValue: first) else {
            return .note(CaptureNote(kind: .unknownPacketType(first), data: data))
        }
        return .packet(HCIPacket(type: type, payload: data[(data.startIndex &+ 1)...]))
    }
}
