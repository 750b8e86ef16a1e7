/// A decoding failure on wire or file data: what was wrong, which field, and where.
///
/// Every decoder in Bluewire reports bad input as a `DecodeError` value instead of trapping, so that
/// one malformed packet from a controller, a peer or a capture never takes the stack down
/// (Bluetooth Core Vol 4 Part E §5.4 and Vol 3 Part F §3.4.1.1 expect hosts to cope with bad PDUs).
public struct DecodeError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong with the input.
    public enum Reason: Equatable, Hashable, Sendable {
        /// The field needed `needed` bytes but only `available` were left.
        case truncated(needed: Int, available: Int)
        /// A length field declared `declared` bytes but `actual` were present.
        case lengthMismatch(declared: Int, actual: Int)
        /// The field holds a value the specification does not allow here.
        case invalidValue(UInt64)
        /// The data is well-formed but of a kind this decoder does not handle.
        case unsupported(UInt64)
        /// Bytes were left over after a fixed-size structure.
        case trailingBytes(Int)
        /// A magic number or signature did not match.
        case badMagic
    }

    /// What was wrong.
    public var reason: Reason
    /// The layer that was decoding ("hci", "l2cap", "att", "snoop", ...).
    public var layer: StaticString
    /// The field being decoded, named as in the specification.
    public var field: StaticString
    /// Byte offset of the field from the start of the structure being decoded
    /// (for captures: from the start of the file).
    public var offset: Int

    @inlinable
    public init(_ reason: Reason, layer: StaticString = "core", field: StaticString, offset: Int) {
        self.reason = reason
        self.layer = layer
        self.field = field
        self.offset = offset
    }

    /// The same error, relabelled with the layer that reports it, and its offset moved by `base`
    /// (used when a decoder works on a sub-range of a larger structure).
    @inlinable
    public func relocated(by base: Int, layer: StaticString? = nil) -> DecodeError {
        var copy = self
        copy.offset += base
        if let layer { copy.layer = layer }
        return copy
    }

    public var description: String {
        let what: String
        switch reason {
        case .truncated(let needed, let available):
            what = "truncated: needs \(needed) byte(s), \(available) left"
        case .lengthMismatch(let declared, let actual):
            what = "length mismatch: declared \(declared), actual \(actual)"
        case .invalidValue(let value):
            what = "invalid value 0x\(hex(value))"
        case .unsupported(let value):
            what = "unsupported value 0x\(hex(value))"
        case .trailingBytes(let count):
            what = "\(count) unexpected trailing byte(s)"
        case .badMagic:
            what = "bad magic"
        }
        return "\(layer.asString): \(field.asString) at offset \(offset): \(what)"
    }

    public static func == (lhs: DecodeError, rhs: DecodeError) -> Bool {
        lhs.reason == rhs.reason && lhs.offset == rhs.offset
            && lhs.field.asString == rhs.field.asString && lhs.layer.asString == rhs.layer.asString
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(reason)
        hasher.combine(offset)
        hasher.combine(field.asString)
    }
}

extension StaticString {
    /// The text of a static string (StaticString has no Embedded-safe `description`).
    @inlinable
    public var asString: String {
        withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
    }
}
