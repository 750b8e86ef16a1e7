/// Counts packets by their sequence numbers: how many arrived, how many never did (gaps), and how
/// many arrived after a later one (out of order).
///
/// Sequences start at 0 (`ThroughputProfile`). A packet above the next expected number opens a gap
/// whose packets count as lost; one of them arriving later is out of order and no longer lost. ATT has
/// no retransmission, so a repeated number can only be out of order too; it is counted so and, since
/// the tracker keeps no history (memory stays flat however long the run), it also takes one packet off
/// the lost count. Sequence numbers wrap at 2³².
public struct ThroughputSequenceTracker: Sendable, Hashable {
    /// Packets recorded.
    public private(set) var packets = 0
    /// Their octets, sequence numbers included.
    public private(set) var octets = 0
    /// Packets skipped by the sequence numbers and not seen since.
    public private(set) var lost = 0
    /// Packets whose number was below one already seen.
    public private(set) var outOfOrder = 0
    /// The next number expected in order.
    public private(set) var nextExpected: UInt32

    public init(firstSequence: UInt32 = 0) {
        nextExpected = firstSequence
    }

    /// Records one packet of `octets` octets numbered `sequence`.
    public mutating func record(sequence: UInt32, octets: Int) {
        packets += 1
        self.octets += octets
        // The distance in modular arithmetic tells "ahead" (< 2³¹) from "behind".
        let ahead = sequence &- nextExpected
        if ahead == 0 {
            nextExpected &+= 1
        } else if ahead < 0x8000_0000 {
            lost += Int(ahead)
            nextExpected = sequence &+ 1
        } else {
            outOfOrder += 1
            if lost > 0 { lost -= 1 }
        }
    }

    /// Forgets everything (the sink report's reset).
    public mutating func reset(firstSequence: UInt32 = 0) {
        self = ThroughputSequenceTracker(firstSequence: firstSequence)
    }
}
