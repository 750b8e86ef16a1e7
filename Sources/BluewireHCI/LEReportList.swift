import BluewireCore

/// One report inside an LE advertising-report event; it knows its own wire layout.
public protocol LEReport: Hashable, Sendable {
    /// Reads one report; the reader's offsets are those of the whole event packet.
    init(decoding reader: inout ByteReader) throws(DecodeError)

    /// Reads the report starting at `index` of `bytes` if all of it lies inside `bytes`, and moves
    /// `index` past it; nil (with `index` unchanged) otherwise. It must agree with
    /// `init(decoding:)` on every input: this is the fast path a scan takes per report, and
    /// `init(decoding:)` then only runs to say what is wrong with a report this one refused.
    init?(wellFormed bytes: ArraySlice<UInt8>, at index: inout Int)
}

extension LEReport {
    /// Through `init(decoding:)`, for reports that do not have a faster one.
    @inlinable
    public init?(wellFormed bytes: ArraySlice<UInt8>, at index: inout Int) {
        var reader = ByteReader(bytes, layer: "hci")
        guard (try? reader.skip(index - bytes.startIndex, "Num_Reports")) != nil,
            let report = try? Self(decoding: &reader)
        else { return nil }
        index = reader.index
        self = report
    }
}

/// The reports of one LE Advertising Report, Directed Advertising Report or Extended Advertising
/// Report event (Core Vol 4 Part E §7.7.65.2, .11, .13). One event may carry several reports
/// (Num_Reports), each laid out whole after the previous one, as controllers send them.
///
/// Iterating decodes the reports lazily from the event bytes and allocates nothing. A report that
/// overruns the event ends the sequence; the reports before it are kept and `error` says what and
/// where (offsets count from the start of the event packet).
///
/// Building the list does no work beyond remembering where the reports start: a scan sees thousands
/// of these events per second and reads each report once, so checking them all up front would
/// decode every report twice. `error` and `validCount` decode the reports when asked.
public struct LEReportList<Report: LEReport>: Hashable, Sendable, Sequence {
    /// Num_Reports as sent.
    public var numReports: UInt8
    /// The event packet, bounded by its Parameter_Total_Length.
    @usableFromInline var packet: ArraySlice<UInt8>
    /// Index in `packet` of the first report.
    @usableFromInline var firstReport: Int

    /// `reader` is positioned at the first report.
    @inlinable
    public init(numReports: UInt8, reader: ByteReader) {
        self.init(numReports: numReports, packet: reader.bytes, firstReport: reader.index)
    }

    @inlinable
    init(numReports: UInt8, packet: ArraySlice<UInt8>, firstReport: Int) {
        self.numReports = numReports
        self.packet = packet
        self.firstReport = firstReport
    }

    /// The first malformed report, if any; the reports before it are still produced.
    /// Decodes the reports up to it (no allocation).
    @inlinable
    public var error: DecodeError? {
        var reader = ByteReader(packet, layer: "hci")
        do throws(DecodeError) {
            try reader.skip(firstReport - packet.startIndex, "Num_Reports")
            for _ in 0..<numReports { _ = try Report(decoding: &reader) }
            return nil
        } catch {
            return error
        }
    }

    /// How many reports decode cleanly (reports before `error`). Decodes them (no allocation).
    @inlinable
    public var validCount: Int {
        var count = 0
        for _ in self { count += 1 }
        return count
    }

    /// Decodes the next report from the event bytes.
    public struct Iterator: IteratorProtocol {
        @usableFromInline let packet: ArraySlice<UInt8>
        /// Index in `packet` of the next report.
        @usableFromInline var position: Int
        @usableFromInline var remaining: Int

        @inlinable init(packet: ArraySlice<UInt8>, position: Int, remaining: Int) {
            self.packet = packet
            self.position = position
            self.remaining = remaining
        }

        @inlinable @inline(__always)
        public mutating func next() -> Report? {
            guard remaining > 0 else { return nil }
            guard let report = Report(wellFormed: packet, at: &position) else {
                // This report overruns the event (`init(wellFormed:at:)` refuses exactly what
                // `init(decoding:)` rejects): the iteration ends and `error` says where.
                remaining = 0
                return nil
            }
            remaining &-= 1
            return report
        }
    }

    @inlinable @inline(__always)
    public func makeIterator() -> Iterator {
        Iterator(packet: packet, position: firstReport, remaining: Int(numReports))
    }

    /// The reports that decode cleanly (a decoding pass).
    @inlinable public var underestimatedCount: Int { validCount }
}

/// LE Advertising Report event (§7.7.65.2): legacy advertising PDUs.
public typealias LEAdvertisingReportEvent = LEReportList<LEAdvertisingReport>
/// LE Extended Advertising Report event (§7.7.65.13).
public typealias LEExtendedAdvertisingReportEvent = LEReportList<LEExtendedAdvertisingReport>
/// LE Directed Advertising Report event (§7.7.65.11).
public typealias LEDirectedAdvertisingReportEvent = LEReportList<LEDirectedAdvertisingReport>

extension ArraySlice<UInt8> {
    /// The six octets at `index` as a little-endian 48-bit value (a device address on the wire).
    /// The caller has checked that they are inside the slice.
    @inlinable @inline(__always)
    func littleEndianUInt48(at index: Int) -> UInt64 {
        var value: UInt64 = 0
        for k in 0..<6 { value |= UInt64(self[index + k]) << (8 * UInt64(k)) }
        return value
    }
}
