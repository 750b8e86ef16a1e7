import BluewireCore
import BluewireSnoop

// Shared by the btsnoop and pcapng targets: the capture reader fed a whole file, in one piece and in
// chunks.
//
// Invariants checked (never a trap):
// - reading the file in one chunk and in small chunks (1–64 bytes, from the input's length) gives the
//   same records, field by field, and the same error: chunk boundaries must not matter;
// - records are numbered 0, 1, 2… at increasing offsets inside the file, and their bytes are slices
//   of the input when it was fed whole (zero copy);
// - an error comes after every complete record and names an offset inside the file;
// - every HCI packet read, written again with BTSnoopWriter and read back, is the same packet with
//   the same direction, timestamp, original length and drop count.

struct RecordSummary: Equatable {
    var index: Int
    var offset: Int
    var direction: PacketDirection
    var timestamp: Int64
    var originalLength: UInt32
    var drops: UInt32
    var flags: UInt32
    var data: [UInt8]
    var packet: HCIPacket?

    init(_ record: CaptureRecord) {
        index = record.index
        offset = record.offset
        direction = record.direction
        timestamp = record.timestamp
        originalLength = record.originalLength
        drops = record.drops
        flags = record.flags
        data = Array(record.data)
        packet = record.packet.map { HCIPacket(type: $0.type, payload: Array($0.payload)) }
    }
}

func readChunked(_ bytes: [UInt8], chunkSize: Int) -> (records: [RecordSummary], error: CaptureError?) {
    var reader = CaptureReader()
    var records: [RecordSummary] = []
    var start = 0
    repeat {
        let end = min(bytes.count, start + chunkSize)
        // A fresh array per chunk, as a file reader would hand over.
        reader.feed(Array(bytes[start..<end]))
        start = end
        if start == bytes.count { reader.finishInput() }
        do {
            while let record = try reader.next() { records.append(RecordSummary(record)) }
        } catch {
            return (records, error)
        }
    } while start < bytes.count
    return (records, nil)
}

func checkCapture(_ bytes: [UInt8]) {
    let (whole, error) = CaptureReader.readAll(bytes)
    var previousOffset = -1
    for (i, record) in whole.enumerated() {
        require(record.index == i, "record \(i) has index \(record.index)")
        require(record.offset > previousOffset && record.offset < bytes.count, "record \(i) at offset \(record.offset)")
        previousOffset = record.offset
        require(record.data.isEmpty || (record.data.startIndex >= 0 && record.data.endIndex <= bytes.count),
                "record \(i) data is not a slice of the file")
        if let packet = record.packet {
            require(packet.payload.count <= record.data.count, "packet longer than its record")
        }
    }
    if let error {
        require(error.recordIndex == whole.count, "error at record \(error.recordIndex) after \(whole.count) records")
        require(error.offset >= 0 && error.offset <= bytes.count, "error offset \(error.offset) outside the file")
        _ = error.description
    }

    let chunkSize = 1 + bytes.count % 64
    let (chunked, chunkedError) = readChunked(bytes, chunkSize: chunkSize)
    let wholeSummaries = whole.map(RecordSummary.init)
    require(chunked.count == wholeSummaries.count, "\(wholeSummaries.count) records whole, \(chunked.count) in \(chunkSize)-byte chunks")
    for (a, b) in zip(wholeSummaries, chunked) {
        require(a == b, "record \(a.index) differs when read in \(chunkSize)-byte chunks")
    }
    require(error == chunkedError, "error \(String(describing: error)) whole, \(String(describing: chunkedError)) chunked")

    checkWriterRoundTrip(whole)
}

func checkWriterRoundTrip(_ records: [CaptureRecord]) {
    let writer = BTSnoopWriter()
    var file = writer.fileHeader
    var written: [CaptureRecord] = []
    for record in records {
        guard let packet = record.packet else { continue }
        writer.appendRecord(packet, direction: record.direction, timestamp: record.timestamp,
                            originalLength: record.originalLength, drops: record.drops, to: &file)
        written.append(record)
    }
    let (reread, error) = CaptureReader.readAll(file)
    require(error == nil, "re-written capture fails: \(String(describing: error))")
    require(reread.count == written.count, "wrote \(written.count) packets, read \(reread.count)")
    for (original, copy) in zip(written, reread) {
        require(copy.packet?.type == original.packet?.type, "packet type changed in the writer round trip")
        require(copy.packet.map { Array($0.payload) } == original.packet.map { Array($0.payload) }, "payload changed in the writer round trip")
        require(copy.direction == original.direction, "direction changed in the writer round trip")
        require(copy.timestamp == original.timestamp && copy.originalLength == original.originalLength && copy.drops == original.drops,
                "record fields changed in the writer round trip")
    }
}
