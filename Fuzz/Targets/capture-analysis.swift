import BluewireAnalysis
import BluewireCore
import BluewireGATT
import BluewireSnoop

// What `bluewire decode` and `bluewire analyze` do with a capture: the summary counts, the btmon-style
// text line and the JSON line of each record, and the per-connection analysis with its GATT tables,
// over records taken from the input.
//
// Input: records back to back, each a meta byte, a 16-bit little-endian length and that many bytes.
//   meta bit 0: direction (1 controller → host); bits 1–3: 0–4 an H4 packet (the bytes start with the
//   packet indicator, as in a btsnoop 1002 record), 5 a Linux monitor note whose opcode is the first
//   byte (System Note, User Logging, New Index, …), 6 an empty record, 7 a malformed pcapng packet note.
//
// Invariants checked (never a trap):
// - the text line is one line: no line breaks or other C0 control characters (ESC included), whatever
//   names and logging text the capture holds (a capture must not be able to forge output lines or
//   send escape sequences to the terminal);
// - the JSON line parses with the strict JSON parser (RFC 8259, no duplicate keys) into an object
//   whose index, kind and summary are those of the description;
// - the summary counts every record exactly once in one category;
// - the analysis counts every record, its JSON report parses strictly and its text report has no
//   control characters but line breaks; every device database it reconstructs (`--export-db`) is
//   written as a file that `GATTDatabase(json:)` (`bluewire serve --db`) loads back identically.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    var describer = PacketDescriber()
    var summary = CaptureSummary()
    var analyzer = CaptureAnalyzer()
    var index = 0
    var timestamp: Int64 = 0x00E0_3AB4_4A67_6000
    while !input.isAtEnd && index < 256 {
        let meta = input.byte()
        let bytes = input.lengthPrefixed16()
        let direction: PacketDirection = meta & 1 == 0 ? .hostToController : .controllerToHost
        let content: CaptureRecord.Content
        switch (meta >> 1) & 7 {
        case 0...4:
            if let first = bytes.first, let type = HCIPacketType(rawValue: first) {
                content = .packet(HCIPacket(type: type, payload: bytes.dropFirst()))
            } else {
                content = .note(CaptureNote(kind: .unknownPacketType(bytes.first ?? 0), data: bytes))
            }
        case 5:
            let opcode = BTSnoopMonitorOpcode(rawValue: UInt16(bytes.first ?? 12))
            content = .note(CaptureNote(kind: .monitor(opcode, controllerIndex: 0), data: bytes.dropFirst()))
        case 6:
            content = .note(CaptureNote(kind: .emptyRecord, data: []))
        default:
            let error = DecodeError(.truncated(needed: 20, available: bytes.count), layer: "pcapng", field: "enhanced packet block", offset: 0)
            content = .note(CaptureNote(kind: .malformed(error), data: bytes))
        }
        timestamp &+= Int64(meta) * 997
        let record = CaptureRecord(
            index: index, offset: 16 + index * 24, direction: direction, timestamp: timestamp,
            originalLength: UInt32(bytes.count), drops: 0, flags: UInt32(meta & 1), data: bytes, content: content)
        summary.add(record)
        analyzer.add(record)
        check(&describer, record)
        index += 1
    }
    let counted = summary.hciCommandFrames + summary.hciEventFrames + summary.hciACLFrames + summary.hciSCOFrames
        + summary.hciISOFrames + summary.noteFrames
    require(summary.frames == index && counted == index, "summary counts \(summary.frames) frames, \(counted) by kind, of \(index) records")
    checkAnalysis(analyzer.analysis, records: index)
    return 0
}

func checkAnalysis(_ analysis: CaptureAnalysis, records: Int) {
    require(analysis.recordCount == records, "analysis counts \(analysis.recordCount) of \(records) records")
    for scalar in analysis.text.unicodeScalars where scalar.value < 0x20 && scalar != "\n" {
        require(false, "control character U+\(hex(scalar.value, width: 4)) in the analysis text:\n\(analysis.text)")
    }
    do {
        _ = try JSONParser.parse(analysis.json)
    } catch {
        require(false, "analysis JSON does not parse (\(error)):\n\(analysis.json)")
    }
    for device in analysis.devices {
        _ = device.databaseFileName
        guard let database = try? device.database() else { continue }
        let file = database.exportJSON()
        do {
            let served = try GATTDatabase(json: file)
            require(served.attributes.count == database.attributes.count, "served database has another attribute count")
            for (a, b) in zip(database.attributes, served.attributes) {
                require(a.handle == b.handle && a.type == b.type && a.permissions == b.permissions
                        && (a.cachedValue ?? []) == (b.cachedValue ?? []), "attribute 0x\(hex(a.handle, width: 4)) changed on export")
            }
        } catch {
            require(false, "exported database of \(device.name) does not load (\(error)):\n\(file)")
        }
    }
}

func check(_ describer: inout PacketDescriber, _ record: CaptureRecord) {
    let description = describer.description(of: record)
    let line = description.line
    for scalar in line.unicodeScalars where scalar.value < 0x20 {
        require(false, "record \(record.index): control character U+\(hex(scalar.value, width: 4)) in the text line: \(line)")
    }
    let json = description.json
    let value: JSONValue
    do {
        value = try JSONParser.parse(json)
    } catch {
        require(false, "record \(record.index): JSON line does not parse (\(error)): \(json)")
        return
    }
    require(value["index"]?.integerValue == Int64(record.index), "JSON index differs")
    require(value["kind"]?.stringValue == description.kind, "JSON kind differs")
    require(value["summary"]?.stringValue == description.summary, "JSON summary differs")
}
