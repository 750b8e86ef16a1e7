import BluewireCore

/// A streaming, sans-I/O reader of btsnoop and pcapng captures.
///
/// Feed it the file's bytes in chunks of any size (`feed`), call `next()` until it returns nil, feed the
/// next chunk, and call `finishInput()` once the file has ended. Records are slices of the chunks, and at
/// most one partial record is buffered between chunks, so memory stays constant for any file size.
///
/// The format is found from the magic number (`btsnoop\0` or the pcapng section header), never from
/// a file name. A header-only file is a valid empty capture. When the input ends inside a header or a
/// record, every complete record is delivered first and then `next()` throws a `CaptureError` with the
/// index and file offset of the broken record. After an error the reader delivers nothing more.
public struct CaptureReader: Sendable {
    enum State: Sendable {
        case detecting
        case btsnoop(BTSnoopDatalink)
        case pcapng
        case done
    }

    var buffer = ChunkBuffer()
    var state: State = .detecting
    /// The current pcapng section (byte order, interfaces); unused for btsnoop.
    var section = PcapngSection()
    var inputEnded = false
    /// The container found in the header, once it has been read.
    public private(set) var format: CaptureFormat?
    /// Records delivered so far (the index of the next one).
    public private(set) var recordCount = 0
    /// The largest record or block accepted; a larger declared length is reported as corrupt instead of
    /// being buffered (an HCI packet is at most 65,540 bytes).
    public let maximumRecordLength: Int

    public init(maximumRecordLength: Int = 1 << 20) {
        self.maximumRecordLength = maximumRecordLength
    }

    /// Adds the next bytes of the file.
    public mutating func feed(_ chunk: ArraySlice<UInt8>) {
        buffer.append(chunk)
    }

    /// Adds the next bytes of the file.
    public mutating func feed(_ chunk: [UInt8]) {
        buffer.append(chunk[...])
    }

    /// Declares that the file has no more bytes: leftover bytes now make `next()` report truncation.
    public mutating func finishInput() {
        inputEnded = true
    }

    /// Whether the capture has been read to its end (or to an error that was reported).
    public var isFinished: Bool {
        if case .done = state { return true }
        return false
    }

    /// The next record; nil when more input is needed or when the capture has ended.
    public mutating func next() throws(CaptureError) -> CaptureRecord? {
        while true {
            let progress: Step
            switch state {
            case .done:
                return nil
            case .detecting:
                progress = try readFileHeader()
            case .btsnoop(let datalink):
                progress = try readBTSnoopRecord(datalink)
            case .pcapng:
                progress = try readPcapngBlock()
            }
            switch progress {
            case .record(let record):
                recordCount &+= 1
                return record
            case .continue:
                continue
            case .needInput:
                guard inputEnded else { return nil }
                return try endOfInput()
            }
        }
    }

    /// What one decoding step achieved.
    enum Step {
        case record(CaptureRecord)
        /// A header or a non-packet block was consumed.
        case `continue`
        case needInput
    }

    /// Called when a unit is incomplete and no more bytes will come.
    mutating func endOfInput() throws(CaptureError) -> CaptureRecord? {
        let available = buffer.availableCount
        let needed: Int
        let field: StaticString
        switch state {
        case .done:
            return nil
        case .detecting:
            state = .done
            guard available > 0 else {
                throw CaptureError(.truncated(needed: 16, available: 0), recordIndex: 0, offset: 0, field: "file header")
            }
            throw CaptureError(.truncated(needed: pendingNeed, available: available), recordIndex: 0, offset: 0,
                               field: "file header")
        case .btsnoop, .pcapng:
            needed = pendingNeed
            field = pendingField
        }
        state = .done
        guard available > 0 else { return nil }
        throw CaptureError(.truncated(needed: needed, available: available), recordIndex: recordCount,
                           offset: buffer.fileOffset, field: field)
    }

    /// What the last incomplete step was waiting for (set by the decoders when they return `.needInput`).
    var pendingNeed = 16
    var pendingField: StaticString = "file header"

    mutating func needInput(_ count: Int, _ field: StaticString) -> Step {
        pendingNeed = count
        pendingField = field
        return .needInput
    }

    mutating func fail(_ reason: CaptureError.Reason, _ field: StaticString, at offset: Int? = nil) -> CaptureError {
        state = .done
        return CaptureError(reason, recordIndex: recordCount, offset: offset ?? buffer.fileOffset, field: field)
    }

    mutating func readFileHeader() throws(CaptureError) -> Step {
        guard let magic = buffer.peek(4) else {
            // Fewer than 4 bytes: the format cannot be known yet.
            return needInput(4, "file header")
        }
        if CaptureFormat.startsWith(magic, CaptureFormat.pcapngMagic) {
            state = .pcapng
            format = .pcapng
            return .continue
        }
        guard let header = buffer.peek(16) else {
            // Report a wrong magic as soon as it shows, even in a short file.
            if let prefix = buffer.peek(min(8, buffer.availableCount)),
               !CaptureFormat.btsnoopMagic.starts(with: prefix) {
                throw fail(.unknownFormat, "file header")
            }
            return needInput(16, "file header")
        }
        guard CaptureFormat.detect(header) == .btsnoop else {
            throw fail(.unknownFormat, "file header")
        }
        let version = header.bigEndianUInt32(at: 8)
        guard version == 1 else {
            throw fail(.unsupportedVersion(version), "version")
        }
        let datalink = BTSnoopDatalink(rawValue: header.bigEndianUInt32(at: 12))
        buffer.consume(16)
        format = .btsnoop(datalink: datalink)
        state = .btsnoop(datalink)
        return .continue
    }
}

extension CaptureReader {
    /// Reads a whole capture held in memory: every complete record, and the error that ended it, if any.
    ///
    /// Convenient for tests and small files; it allocates an array of records. Use `next()` to stream.
    public static func readAll(_ bytes: [UInt8]) -> (records: [CaptureRecord], error: CaptureError?) {
        var reader = CaptureReader()
        reader.feed(bytes)
        reader.finishInput()
        var records: [CaptureRecord] = []
        do {
            while let record = try reader.next() { records.append(record) }
        } catch {
            return (records, error)
        }
        return (records, nil)
    }
}

extension ArraySlice where Element == UInt8 {
    /// A big-endian UInt32 at `offset` from the slice's start; the caller has checked the bounds.
    @inlinable
    func bigEndianUInt32(at offset: Int) -> UInt32 {
        let i = startIndex &+ offset
        return UInt32(self[i]) << 24 | UInt32(self[i &+ 1]) << 16 | UInt32(self[i &+ 2]) << 8 | UInt32(self[i &+ 3])
    }

    @inlinable
    func littleEndianUInt32(at offset: Int) -> UInt32 {
        let i = startIndex &+ offset
        return UInt32(self[i]) | UInt32(self[i &+ 1]) << 8 | UInt32(self[i &+ 2]) << 16 | UInt32(self[i &+ 3]) << 24
    }

    @inlinable
    func uint32(at offset: Int, littleEndian: Bool) -> UInt32 {
        littleEndian ? littleEndianUInt32(at: offset) : bigEndianUInt32(at: offset)
    }

    @inlinable
    func uint16(at offset: Int, littleEndian: Bool) -> UInt16 {
        let i = startIndex &+ offset
        return littleEndian ? UInt16(self[i]) | UInt16(self[i &+ 1]) << 8 : UInt16(self[i]) << 8 | UInt16(self[i &+ 1])
    }
}
