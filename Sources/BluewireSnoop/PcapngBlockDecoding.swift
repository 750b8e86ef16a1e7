import BluewireCore

/// The state of one pcapng section: its byte order and the interfaces described so far.
struct PcapngSection: Sendable {
    var littleEndian = true
    var interfaces: [PcapngInterface] = []
    /// Interfaces beyond this are ignored (their packets become notes) so a corrupt file cannot grow memory.
    static let maximumInterfaces = 256
}

/// What a packet's bytes mean on one pcapng interface, and how to turn its timestamps into microseconds.
struct PcapngInterface: Sendable {
    var linkType: UInt32
    /// if_tsresol: bit 7 clear = 10^-n seconds, set = 2^-n seconds. Default 6 (microseconds).
    var timestampResolution: UInt8 = 6
    /// if_tsoffset, in seconds, added to every timestamp.
    var timestampOffset: Int64 = 0

    func microseconds(_ raw: UInt64) -> Int64 {
        let n = Int(timestampResolution & 0x7F)
        var value: UInt64
        if timestampResolution & 0x80 != 0 {
            // Binary fractions: raw × 10^6 / 2^n, computed in 128 bits so it cannot overflow.
            let (high, low) = raw.multipliedFullWidth(by: 1_000_000)
            value = n >= 64 ? high >> UInt64(n - 64) : (n == 0 ? low : (low >> UInt64(n)) | (high << UInt64(64 - n)))
        } else if n <= 6 {
            value = raw &* PcapngInterface.powerOfTen(6 - n)
        } else {
            value = n - 6 >= 20 ? 0 : raw / PcapngInterface.powerOfTen(n - 6)
        }
        return Int64(bitPattern: value) &+ timestampOffset &* 1_000_000
    }

    static func powerOfTen(_ exponent: Int) -> UInt64 {
        var result: UInt64 = 1
        for _ in 0..<min(exponent, 19) { result &*= 10 }
        return result
    }
}

/// pcapng block types (pcapng specification, IETF draft-ietf-opsawg-pcapng §4).
enum PcapngBlockType {
    static let sectionHeader: UInt32 = 0x0A0D_0D0A
    static let interfaceDescription: UInt32 = 0x0000_0001
    static let obsoletePacket: UInt32 = 0x0000_0002
    static let simplePacket: UInt32 = 0x0000_0003
    static let enhancedPacket: UInt32 = 0x0000_0006
}

/// Link types Bluewire decodes (tcpdump.org LINKTYPE_ values).
enum PcapngLinkType {
    static let bluetoothHCIH4: UInt32 = 187
    /// H4 preceded by a 4-byte big-endian direction word (0 sent, 1 received).
    static let bluetoothHCIH4WithPHDR: UInt32 = 201
    /// Linux monitor: a 4-byte big-endian header of adapter index and opcode.
    static let bluetoothLinuxMonitor: UInt32 = 254
}

extension CaptureReader {
    mutating func readPcapngBlock() throws(CaptureError) -> Step {
        guard let start = buffer.peek(8) else { return needInput(8, "block header") }
        let rawType = start.littleEndianUInt32(at: 0)
        if rawType == PcapngBlockType.sectionHeader {
            // The section's byte order is only known from the byte-order magic after the length.
            guard let head = buffer.peek(12) else { return needInput(12, "section header") }
            switch head.littleEndianUInt32(at: 8) {
            case 0x1A2B_3C4D: section.littleEndian = true
            case 0x4D3C_2B1A: section.littleEndian = false
            default: throw fail(.malformedBlock(.badMagic), "byte-order magic")
            }
            section.interfaces.removeAll(keepingCapacity: true)
        }
        let littleEndian = section.littleEndian
        let type = start.uint32(at: 0, littleEndian: littleEndian)
        let length = Int(start.uint32(at: 4, littleEndian: littleEndian))
        guard length >= 12, length % 4 == 0 else {
            throw fail(.malformedBlock(.invalidValue(UInt64(length))), "block total length")
        }
        guard length <= maximumRecordLength else {
            throw fail(.recordTooLarge(length: length, limit: maximumRecordLength), "block total length")
        }
        guard let block = buffer.peek(length) else { return needInput(length, "block") }
        guard Int(block.uint32(at: length - 4, littleEndian: littleEndian)) == length else {
            throw fail(.malformedBlock(.lengthMismatch(declared: length,
                                                       actual: Int(block.uint32(at: length - 4, littleEndian: littleEndian)))),
                       "trailing block total length")
        }
        let offset = buffer.fileOffset
        buffer.consume(length)
        // The block body, between the 8-byte header and the 4-byte trailer.
        let body = block[(block.startIndex &+ 8)..<(block.endIndex &- 4)]

        switch type {
        case PcapngBlockType.interfaceDescription:
            describeInterface(body)
            return .continue
        case PcapngBlockType.enhancedPacket:
            return .record(enhancedPacket(body, offset: offset))
        case PcapngBlockType.simplePacket:
            return .record(simplePacket(body, offset: offset))
        case PcapngBlockType.obsoletePacket:
            return .record(obsoletePacket(body, offset: offset))
        default:
            // Section headers (already handled), name resolution, statistics, custom blocks...
            return .continue
        }
    }

    mutating func describeInterface(_ body: ArraySlice<UInt8>) {
        let littleEndian = section.littleEndian
        guard body.count >= 8, section.interfaces.count < PcapngSection.maximumInterfaces else {
            // Keep interface numbering: a broken description still takes its interface id.
            if section.interfaces.count < PcapngSection.maximumInterfaces {
                section.interfaces.append(PcapngInterface(linkType: UInt32.max))
            }
            return
        }
        var interface = PcapngInterface(linkType: UInt32(body.uint16(at: 0, littleEndian: littleEndian)))
        forEachOption(body[(body.startIndex &+ 8)...], littleEndian: littleEndian) { code, value in
            if code == 9, value.count >= 1 { interface.timestampResolution = value[value.startIndex] }
            if code == 14, value.count >= 8 {
                interface.timestampOffset = Int64(bitPattern: UInt64(value.uint32(at: 0, littleEndian: littleEndian))
                    << (littleEndian ? 0 : 32) | UInt64(value.uint32(at: 4, littleEndian: littleEndian)) << (littleEndian ? 32 : 0))
            }
        }
        section.interfaces.append(interface)
    }

    /// Calls `body` for each option (code, value) until the end-of-options marker or a malformed option.
    func forEachOption(
        _ options: ArraySlice<UInt8>, littleEndian: Bool, _ body: (UInt16, ArraySlice<UInt8>) -> Void
    ) {
        var i = options.startIndex
        while options.endIndex &- i >= 4 {
            let header = options[i..<(i &+ 4)]
            let code = header.uint16(at: 0, littleEndian: littleEndian)
            let length = Int(header.uint16(at: 2, littleEndian: littleEndian))
            if code == 0 { return }
            let valueStart = i &+ 4
            guard options.endIndex &- valueStart >= length else { return }
            body(code, options[valueStart..<(valueStart &+ length)])
            i = valueStart &+ ((length &+ 3) & ~3)
        }
    }

    mutating func enhancedPacket(_ body: ArraySlice<UInt8>, offset: Int) -> CaptureRecord {
        let littleEndian = section.littleEndian
        guard body.count >= 20 else {
            return malformedPacket(body, offset: offset, .truncated(needed: 20, available: body.count), "enhanced packet block")
        }
        let interfaceID = body.uint32(at: 0, littleEndian: littleEndian)
        let rawTime = UInt64(body.uint32(at: 4, littleEndian: littleEndian)) << 32
            | UInt64(body.uint32(at: 8, littleEndian: littleEndian))
        let capturedLength = Int(body.uint32(at: 12, littleEndian: littleEndian))
        let originalLength = body.uint32(at: 16, littleEndian: littleEndian)
        let dataStart = body.startIndex &+ 20
        guard capturedLength <= body.endIndex &- dataStart else {
            return malformedPacket(body, offset: offset,
                                   .lengthMismatch(declared: capturedLength, actual: body.endIndex &- dataStart),
                                   "captured packet length")
        }
        let data = body[dataStart..<(dataStart &+ capturedLength)]
        var flags: UInt32 = 0
        var drops: UInt32 = 0
        let optionsStart = dataStart &+ ((capturedLength &+ 3) & ~3)
        if optionsStart < body.endIndex {
            forEachOption(body[optionsStart...], littleEndian: littleEndian) { code, value in
                if code == 2, value.count >= 4 { flags = value.uint32(at: 0, littleEndian: littleEndian) }
                if code == 4, value.count >= 8 {
                    // epb_dropcount is 64 bits; the record keeps the low 32 like btsnoop's field.
                    drops = value.uint32(at: littleEndian ? 0 : 4, littleEndian: littleEndian)
                }
            }
        }
        return packetRecord(interfaceID: interfaceID, rawTime: rawTime, originalLength: originalLength,
                            drops: drops, flags: flags, data: data, offset: offset)
    }

    mutating func simplePacket(_ body: ArraySlice<UInt8>, offset: Int) -> CaptureRecord {
        guard body.count >= 4 else {
            return malformedPacket(body, offset: offset, .truncated(needed: 4, available: body.count), "simple packet block")
        }
        let originalLength = body.uint32(at: 0, littleEndian: section.littleEndian)
        // A simple packet holds min(original length, snap length) bytes; the rest of the body is padding.
        let available = body.count &- 4
        let captured = min(Int(originalLength), available)
        let data = body[(body.startIndex &+ 4)..<(body.startIndex &+ 4 &+ captured)]
        return packetRecord(interfaceID: 0, rawTime: 0, originalLength: originalLength, drops: 0, flags: 0,
                            data: data, offset: offset)
    }

    mutating func obsoletePacket(_ body: ArraySlice<UInt8>, offset: Int) -> CaptureRecord {
        let littleEndian = section.littleEndian
        guard body.count >= 20 else {
            return malformedPacket(body, offset: offset, .truncated(needed: 20, available: body.count), "packet block")
        }
        let interfaceID = UInt32(body.uint16(at: 0, littleEndian: littleEndian))
        let drops = UInt32(body.uint16(at: 2, littleEndian: littleEndian))
        let rawTime = UInt64(body.uint32(at: 4, littleEndian: littleEndian)) << 32
            | UInt64(body.uint32(at: 8, littleEndian: littleEndian))
        let capturedLength = Int(body.uint32(at: 12, littleEndian: littleEndian))
        let originalLength = body.uint32(at: 16, littleEndian: littleEndian)
        let dataStart = body.startIndex &+ 20
        guard capturedLength <= body.endIndex &- dataStart else {
            return malformedPacket(body, offset: offset,
                                   .lengthMismatch(declared: capturedLength, actual: body.endIndex &- dataStart),
                                   "captured packet length")
        }
        return packetRecord(interfaceID: interfaceID, rawTime: rawTime, originalLength: originalLength, drops: drops,
                            flags: 0, data: body[dataStart..<(dataStart &+ capturedLength)], offset: offset)
    }

    func malformedPacket(
        _ body: ArraySlice<UInt8>, offset: Int, _ reason: DecodeError.Reason, _ field: StaticString
    ) -> CaptureRecord {
        let error = DecodeError(reason, layer: "pcapng", field: field, offset: offset)
        return CaptureRecord(index: recordCount, offset: offset, direction: .controllerToHost, timestamp: 0,
                             originalLength: 0, drops: 0, flags: 0, data: body,
                             content: .note(CaptureNote(kind: .malformed(error), data: body)))
    }

    func packetRecord(
        interfaceID: UInt32, rawTime: UInt64, originalLength: UInt32, drops: UInt32, flags: UInt32,
        data: ArraySlice<UInt8>, offset: Int
    ) -> CaptureRecord {
        // epb_flags bits 0-1: 01 inbound, 10 outbound; used when the link type has no direction of its own.
        var direction: PacketDirection = flags & 3 == 2 ? .hostToController : .controllerToHost
        var timestamp = Int64(bitPattern: rawTime)
        let content: CaptureRecord.Content
        if Int(interfaceID) < section.interfaces.count {
            let interface = section.interfaces[Int(interfaceID)]
            timestamp = interface.microseconds(rawTime)
            switch interface.linkType {
            case PcapngLinkType.bluetoothHCIH4WithPHDR:
                if data.count >= 4 {
                    direction = data.bigEndianUInt32(at: 0) & 1 == 0 ? .hostToController : .controllerToHost
                    content = CaptureReader.h4Content(data[(data.startIndex &+ 4)...])
                } else {
                    let error = DecodeError(.truncated(needed: 4, available: data.count), layer: "pcapng",
                                            field: "direction", offset: offset)
                    content = .note(CaptureNote(kind: .malformed(error), data: data))
                }
            case PcapngLinkType.bluetoothHCIH4:
                content = CaptureReader.h4Content(data)
            case PcapngLinkType.bluetoothLinuxMonitor:
                if data.count >= 4 {
                    // Adapter index then opcode, both big-endian: the same layout as btsnoop 2001 flags.
                    let (monitorDirection, monitorContent) = CaptureReader.btsnoopContent(
                        datalink: .linuxMonitor, flags: data.bigEndianUInt32(at: 0), data: data[(data.startIndex &+ 4)...])
                    direction = monitorDirection
                    content = monitorContent
                } else {
                    let error = DecodeError(.truncated(needed: 4, available: data.count), layer: "pcapng",
                                            field: "monitor header", offset: offset)
                    content = .note(CaptureNote(kind: .malformed(error), data: data))
                }
            default:
                content = .note(CaptureNote(kind: .unsupportedLinkType(interface.linkType), data: data))
            }
        } else {
            content = .note(CaptureNote(kind: .unknownInterface(interfaceID), data: data))
        }
        return CaptureRecord(index: recordCount, offset: offset, direction: direction, timestamp: timestamp,
                             originalLength: originalLength, drops: drops, flags: flags, data: data, content: content)
    }
}
