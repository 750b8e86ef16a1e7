import BluewireCore

/// One report inside an LE advertising-report event; it knows its own wire layout.
public protocol LEReport: Hashable, Sendable {
    /// Reads one report; the reader's offsets are those of the whole event packet.
    init(decoding reader: inout ByteReader) throws(DecodeError)
}

/// The reports of one LE Advertising Report, Directed Advertising Report or Extended Advertising
/// Report event (Core Vol 4 Part E §7.7.65.2, .11, .13). One event may carry several reports
/// (Num_Reports), each laid out whole after the previous one, as controllers send them.
///
/// Iterating decodes the reports lazily from the event bytes and allocates nothing. A report that
/// overruns the event ends the sequence; the reports before it are kept and `error` says what and
/// where (offsets count from the start of the event packet).
public struct LEReportList<Report: LEReport>: Hashable, Sendable, Sequence {
    /// Num_Reports as sent.
    public var numReports: UInt8
    /// The event packet, bounded by its Parameter_Total_Length.
    @usableFromInline var packet: ArraySlice<UInt8>
    /// Index in `packet` of the first report.
    @usableFromInline var firstReport: Int
    /// The first malformed report, if any; the reports before it are still produced.
    public let error: DecodeError?
    /// How many reports decode cleanly (reports before `error`).
    public let validCount: Int

    /// Checks every report once (without allocating) so that `error` and `validCount` are known
    /// before iteration. `reader` is positioned at the first report.
    @inlinable
    public init(numReports: UInt8, reader: ByteReader) {
        self.numReports = numReports
        self.packet = reader.bytes
        self.firstReport = reader.index
        var r = reader
        var count = 0
        var failure: DecodeError? = nil
        while count < Int(numReports) {
            do {
                _ = try Report(decoding: &r)
            } catch {
                failure = error
                break
            }
            count += 1
        }
        self.error = failure
        self.validCount = count
    }

    /// Decodes the next report from the event bytes.
    public struct Iterator: IteratorProtocol {
        @usableFromInline var reader: ByteReader
        @usableFromInline var remaining: Int

        @inlinable init(reader: ByteReader, remaining: Int) {
            self.reader = reader
            self.remaining = remaining
        }

        @inlinable
        public mutating func next() -> Report? {
            guard remaining > 0 else { return nil }
            remaining -= 1
            return try? Report(decoding: &reader)
        }
    }

    @inlinable
    public func makeIterator() -> Iterator {
        var reader = ByteReader(packet, layer: "hci")
        // firstReport was validated against this same slice at init.
        try? reader.skip(firstReport - packet.startIndex, "Num_Reports")
        return Iterator(reader: reader, remaining: validCount)
    }

    @inlinable public var underestimatedCount: Int { validCount }
}

/// LE Advertising Report event (§7.7.65.2): legacy advertising PDUs.
public typealias LEAdvertisingReportEvent = LEReportList<LEAdvertisingReport>
/// LE Extended Advertising Report event (§7.7.65.13).
public typealias LEExtendedAdvertisingReportEvent = LEReportList<LEExtendedAdvertisingReport>
/// LE Directed Advertising Report event (§7.7.65.11).
public typealias LEDirectedAdvertisingReportEvent = LEReportList<LEDirectedAdvertisingReport>
