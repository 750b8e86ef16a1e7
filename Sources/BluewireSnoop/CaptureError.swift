import BluewireCore

/// Why a capture could not be read further, and where.
///
/// A capture reader delivers every complete record before reporting the error, so a file that was
/// copied while it was still being written keeps everything up to its last complete record.
public struct CaptureError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Reason: Equatable, Sendable {
        /// The first bytes match neither `btsnoop\0` nor the pcapng section header magic.
        case unknownFormat
        /// The btsnoop header names a version other than 1.
        case unsupportedVersion(UInt32)
        /// The input ended inside a header or a record: `needed` bytes were required from `offset`
        /// and only `available` were left.
        case truncated(needed: Int, available: Int)
        /// A length field asks for a record larger than the reader buffers (a corrupt length).
        case recordTooLarge(length: Int, limit: Int)
        /// pcapng block framing is broken (length not a multiple of 4, trailer mismatch, bad byte-order magic).
        case malformedBlock(DecodeError.Reason)
    }

    public var reason: Reason
    /// The number of records delivered before this error: the index the broken record would have had.
    public var recordIndex: Int
    /// Byte offset, from the start of the file, of the header or record that could not be read.
    public var offset: Int
    /// What was being read, for messages ("file header", "record header", "packet data", ...).
    public var field: StaticString

    @inlinable
    public init(_ reason: Reason, recordIndex: Int, offset: Int, field: StaticString) {
        self.reason = reason
        self.recordIndex = recordIndex
        self.offset = offset
        self.field = field
    }

    /// Whether the error is the input ending early (as opposed to bytes that make no sense).
    @inlinable
    public var isTruncation: Bool {
        if case .truncated = reason { return true }
        return false
    }

    public var description: String {
        let what: String
        switch reason {
        case .unknownFormat:
            what = "not a btsnoop or pcapng capture (unknown magic)"
        case .unsupportedVersion(let version):
            what = "unsupported btsnoop version \(version)"
        case .truncated(let needed, let available):
            what = "truncated \(field.asString): needs \(needed) byte(s), \(available) left"
        case .recordTooLarge(let length, let limit):
            what = "\(field.asString) declares \(length) bytes, more than the \(limit)-byte limit"
        case .malformedBlock(let reason):
            what = "malformed \(field.asString): " + CaptureError.text(reason)
        }
        switch reason {
        case .unknownFormat, .unsupportedVersion:
            return what
        default:
            return "record \(recordIndex) at offset \(offset): \(what)"
        }
    }

    static func text(_ reason: DecodeError.Reason) -> String {
        switch reason {
        case .truncated(let needed, let available): return "needs \(needed) byte(s), \(available) left"
        case .lengthMismatch(let declared, let actual): return "length \(declared) does not match \(actual)"
        case .invalidValue(let value): return "invalid value 0x" + hex(value)
        case .unsupported(let value): return "unsupported value 0x" + hex(value)
        case .trailingBytes(let count): return "\(count) unexpected trailing byte(s)"
        case .badMagic: return "bad magic"
        }
    }

    public static func == (lhs: CaptureError, rhs: CaptureError) -> Bool {
        lhs.reason == rhs.reason && lhs.recordIndex == rhs.recordIndex && lhs.offset == rhs.offset
            && lhs.field.asString == rhs.field.asString
    }
}
