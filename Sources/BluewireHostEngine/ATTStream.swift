import BluewireHCI

/// A stream of sequence-numbered ATT values that the engine sends by itself, as fast as the
/// controller's ACL buffers take them (`HostRequest.streamATT`): what a throughput source needs, with
/// no request per packet and no queue that grows without bound.
///
/// Each value is `length` octets: the sequence number (UInt32, little-endian, from `firstSequence`)
/// and zeros. Neither PDU is acknowledged at the ATT layer (Core Vol 3 Part F §3.4.5.3, §3.4.7.1), so
/// ACL flow control (Core Vol 4 Part E §4.1.1) is the only pacing: the engine keeps the link's ACL
/// queue about two controller buffer counts long, topping it up as Number Of Completed Packets
/// returns buffers, so the controller always has the next packet ready and memory stays flat.
public struct ATTStream: Hashable, Sendable {
    /// Which unacknowledged PDU carries the values.
    public enum PDU: Hashable, Sendable {
        /// Handle Value Notification from our server (§3.4.7.1), to a central subscribed to
        /// `valueHandle`'s notifications; the stream ends when it unsubscribes.
        case notification
        /// Write Command from our client (§3.4.5.3) to the peer's `valueHandle`.
        case writeCommand
    }

    public var pdu: PDU
    /// The characteristic value handle: ours for notifications, the peer's for Write Commands.
    public var valueHandle: UInt16
    /// Octets per value, at least the 4 of the sequence number; cut to ATT_MTU − 3 and to 512 (the
    /// longest attribute value, §3.2.9). Nil: ATT_MTU − 3 (at most 512), following MTU changes.
    public var length: Int?
    /// The first value's sequence number.
    public var firstSequence: UInt32
    /// Stop after this many values; nil: until stopped.
    public var limit: Int?

    public init(pdu: PDU, valueHandle: UInt16, length: Int? = nil, firstSequence: UInt32 = 0, limit: Int? = nil) {
        self.pdu = pdu
        self.valueHandle = valueHandle
        self.length = length
        self.firstSequence = firstSequence
        self.limit = limit
    }

    /// Octets of the sequence number at the start of every value.
    public static let sequenceLength = 4

    /// The value length at `mtu`: `length` (or the longest) within 4...min(ATT_MTU − 3, 512).
    public func valueLength(mtu: Int) -> Int {
        let longest = Swift.max(Self.sequenceLength, Swift.min(mtu - 3, 512))
        return Swift.max(Self.sequenceLength, Swift.min(length ?? longest, longest))
    }
}

/// Why an ATT stream ended (`HostCompletion.streamed`).
public enum ATTStreamEnd: Hashable, Sendable {
    /// `limit` values were sent.
    case limit
    /// `.stopATTStream` ended it.
    case stopped
    /// The central disabled notifications (or never had them enabled).
    case unsubscribed
    /// A new stream of the same PDU on the link took its place.
    case replaced
    /// The link went down with this reason (what was still queued was dropped).
    case disconnected(HCIStatus)
}
