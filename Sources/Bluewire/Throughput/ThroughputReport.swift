import BluewireCore

/// What a throughput run moves, and how.
public enum ThroughputMode: String, Sendable, Hashable, CaseIterable {
    /// The peer's server notifies the stream characteristic (Handle Value Notification, Core Vol 3
    /// Part F §3.4.7.1); the central counts what arrives.
    case notify
    /// The central writes the sink with Write Commands (§3.4.5.3): no response, only ACL flow control.
    case writeWithoutResponse = "write-without-response"
    /// The central writes the sink with Write Requests (§3.4.5.1), one at a time (one outstanding
    /// request per bearer, §3.3.2); each Write Response gives a round-trip latency.
    case write
    /// The peer's source sends sequence-numbered SDUs on an LE Credit Based channel (Core Vol 3
    /// Part A §4.22, §10.1) as fast as credits allow; the central counts them (`ChannelThroughput`,
    /// on an `EngineHost`, not GATT: `ThroughputClient` refuses it).
    case l2cap

    /// Whether each packet is acknowledged at the ATT layer (so latency can be measured).
    public var isAcknowledged: Bool { self == .write }
}

/// A snapshot of a run in progress (about once per second).
public struct ThroughputProgress: Sendable, Hashable {
    /// Time since measuring started.
    public var elapsed: TimeSpan
    /// Packets and their octets so far (received for notify, sent for writes).
    public var packets: Int
    public var octets: Int
    /// Packets lost so far, where the receiving side can tell (notify); nil otherwise.
    public var lost: Int?
    /// Goodput over the last interval (since the previous snapshot), kbit/s.
    public var intervalKilobitsPerSecond: Double
    /// Goodput since measuring started, kbit/s.
    public var kilobitsPerSecond: Double

    public init(elapsed: TimeSpan, packets: Int, octets: Int, lost: Int?, intervalKilobitsPerSecond: Double, kilobitsPerSecond: Double) {
        self.elapsed = elapsed
        self.packets = packets
        self.octets = octets
        self.lost = lost
        self.intervalKilobitsPerSecond = intervalKilobitsPerSecond
        self.kilobitsPerSecond = kilobitsPerSecond
    }
}

/// The result of a throughput run.
///
/// Goodput counts ATT value octets only (sequence number and filler; no ATT, L2CAP, HCI or link-layer
/// headers), which is what the physical limits of a link are quoted in: ≈ 791 kbit/s on LE 1M and
/// ≈ 1,402 kbit/s on LE 2M with 251-octet link-layer packets and ATT_MTU 247.
public struct ThroughputReport: Sendable, Hashable {
    public var mode: ThroughputMode
    /// The ATT_MTU in force (l2cap: our receive MTU on the channel).
    public var mtu: Int
    /// Octets of each packet's value (l2cap: of the longest SDU).
    public var payloadLength: Int
    /// The measured interval: from the start of the stream to the last packet (notify), or until the
    /// controller had sent every write (writes).
    public var elapsed: TimeSpan
    /// Packets that arrived (notify: at the central; writes: at the peer's sink when it reports,
    /// else sent) and their octets.
    public var packets: Int
    public var octets: Int
    /// Packets the central sent (writes); nil for notify.
    public var sent: Int?
    /// Lost and out-of-order packets by sequence number; nil when the receiving side cannot tell (a
    /// sink that is not Bluewire's throughput peer).
    public var lost: Int?
    public var outOfOrder: Int?
    /// Round-trip latency percentiles (acknowledged modes).
    public var latency: LatencyPercentiles?
    /// The PHYs the run measured on: those the link moved to when the run asked for some
    /// (`ThroughputOptions.phy`), else those LE Read PHY reported; nil if neither is known.
    public var phy: PHYs?
    /// The run asked for a PHY (`ThroughputOptions.phy`) and the controller refused, did not answer
    /// within the timeout, or the link layer did not change it: the run measured on `phy`.
    public var phyRequestFailed = false

    /// A link's PHY each way (Core Vol 4 Part E §7.7.65.12: 1 = LE 1M, 2 = LE 2M, 3 = LE Coded).
    public struct PHYs: Sendable, Hashable {
        public var tx: UInt8
        public var rx: UInt8
        public init(tx: UInt8, rx: UInt8) {
            self.tx = tx
            self.rx = rx
        }
    }

    public init(
        mode: ThroughputMode, mtu: Int, payloadLength: Int, elapsed: TimeSpan, packets: Int, octets: Int,
        sent: Int? = nil, lost: Int? = nil, outOfOrder: Int? = nil, latency: LatencyPercentiles? = nil
    ) {
        self.mode = mode
        self.mtu = mtu
        self.payloadLength = payloadLength
        self.elapsed = elapsed
        self.packets = packets
        self.octets = octets
        self.sent = sent
        self.lost = lost
        self.outOfOrder = outOfOrder
        self.latency = latency
    }

    /// Goodput in kbit/s (1 kbit = 1,000 bits).
    public var kilobitsPerSecond: Double { Self.kilobitsPerSecond(octets: octets, over: elapsed) }

    /// Packets per second.
    public var packetsPerSecond: Double {
        elapsed.microseconds > 0 ? Double(packets) * 1_000_000 / Double(elapsed.microseconds) : 0
    }

    /// `octets` over `span` in kbit/s (0 for an empty span).
    public static func kilobitsPerSecond(octets: Int, over span: TimeSpan) -> Double {
        span.microseconds > 0 ? Double(octets) * 8_000 / Double(span.microseconds) : 0
    }
}
