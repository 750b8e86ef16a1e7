import BluewireCore

/// Why a replayed capture stopped agreeing with the host that drives it: the replay transport
/// (BluewireTesting) fails with this, wrapped in `TransportError.replay`, both from `send` and on
/// `inbound`, so the host sees it wherever it is waiting.
///
/// It names the capture record the host's packet was held against and carries both packets, so a
/// failure reads as an expected/actual hex diff.
public struct ReplayMismatch: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable {
        /// The host sent a packet of the same kind (command opcode, ACL handle) as the next one the
        /// capture holds, with different bytes.
        case differentBytes
        /// The capture holds no further packet of this kind; `expected` is the next packet the capture
        /// does hold, if any.
        case unexpectedPacket
        /// The host closed the transport with `count` host-to-controller packets of the capture never
        /// sent (strict replay); `expected` is the first of them.
        case unsentPackets(count: Int)
        /// The host sent a packet of a kind the capture holds none of within the next `records` records
        /// (a replay reads the capture as it goes and looks no further ahead); `expected` is the next
        /// packet the capture does hold.
        case beyondLookahead(records: Int)
    }

    public var reason: Reason
    /// Index, from 0, of the capture record compared with (or the first one never sent).
    public var recordIndex: Int?
    /// The packet the capture holds at `recordIndex`.
    public var expected: HCIPacket?
    /// What the host sent.
    public var actual: HCIPacket?

    public init(reason: Reason, recordIndex: Int?, expected: HCIPacket?, actual: HCIPacket?) {
        self.reason = reason
        self.recordIndex = recordIndex
        self.expected = expected
        self.actual = actual
    }

    /// Offset (in the H4 form, type byte first) of the first byte where the two packets differ.
    public var firstDifference: Int? {
        guard let expected, let actual else { return nil }
        let e = expected.h4Bytes, a = actual.h4Bytes
        for i in 0..<Swift.min(e.count, a.count) where e[i] != a[i] { return i }
        return e.count == a.count ? nil : Swift.min(e.count, a.count)
    }

    /// One line: what happened, where, and both packets in hex (H4 form).
    public var description: String {
        let place = recordIndex.map { "record \($0)" } ?? "end of capture"
        var text: String
        switch reason {
        case .differentBytes:
            text = "replay mismatch at \(place): the host sent different bytes"
            if let firstDifference { text += " (first difference at byte \(firstDifference))" }
        case .unexpectedPacket:
            text = "replay mismatch at \(place): the capture holds no such packet next"
        case .unsentPackets(let count):
            text = "replay incomplete: \(count) host-to-controller packet(s) of the capture never sent, first at \(place)"
        case .beyondLookahead(let records):
            text = "replay mismatch at \(place): the capture holds no such packet within the next \(records) records"
        }
        if let expected { text += "; expected " + hexString(expected.h4Bytes, separator: " ") }
        if let actual { text += "; actual " + hexString(actual.h4Bytes, separator: " ") }
        return text
    }

    /// Expected and actual on lines of their own, with `^^` under each differing byte.
    public var diff: String {
        let e = expected?.h4Bytes ?? [], a = actual?.h4Bytes ?? []
        var out = "expected: " + (expected == nil ? "(nothing)" : hexString(e, separator: " ")) + "\n"
        out += "actual:   " + (actual == nil ? "(nothing)" : hexString(a, separator: " ")) + "\n"
        guard expected != nil, actual != nil else { return out }
        var marks = "          "
        for i in 0..<Swift.max(e.count, a.count) {
            if i > 0 { marks += " " }
            marks += i < e.count && i < a.count && e[i] == a[i] ? "  " : "^^"
        }
        while marks.last == " " { marks.removeLast() }
        return out + marks + "\n"
    }
}
