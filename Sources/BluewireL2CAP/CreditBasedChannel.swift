/// One credit based channel as the manager keeps it (Core Vol 3 Part A §10.1): the parameters each
/// side declared, the credits each side holds, and the SDUs on their way in and out.
public struct CreditBasedChannel: Hashable, Sendable {
    /// LE Credit Based (§4.22) or Enhanced Credit Based (§4.25).
    public enum Kind: Hashable, Sendable {
        case leCreditBased
        case enhancedCreditBased
    }

    public enum State: Hashable, Sendable {
        /// We sent the connection request and wait for the response.
        case connecting
        case open
        /// A Disconnection Request is outstanding; K-frames are dropped.
        case disconnecting
    }

    /// Our CID: the destination of the K-frames the peer sends us.
    public let localCID: UInt16
    /// The peer's CID (0 until the response names it): the destination of our K-frames.
    public internal(set) var remoteCID: UInt16
    public let psm: SPSM
    public let kind: Kind
    /// Whether we sent the connection request.
    public let isInitiator: Bool
    public internal(set) var state: State

    /// The largest SDU we accept (our MTU).
    public var localMTU: Int { reassembler.mtu }
    /// The largest K-frame payload we accept (our MPS).
    public var localMPS: Int { reassembler.mps }
    /// The largest SDU the peer accepts.
    public internal(set) var remoteMTU: Int
    /// The largest K-frame payload the peer accepts.
    public var remoteMPS: Int { segmenter.mps }
    /// K-frames we may still send.
    public internal(set) var sendCredits: Int
    /// K-frames the peer may still send us.
    public internal(set) var receiveCredits: Int
    /// The credits we gave at connection: also the most K-frames we ever hold, which bounds the
    /// channel's receive memory to `initialReceiveCredits × localMPS` octets.
    public let initialReceiveCredits: Int

    var reassembler: KFrameReassembler
    var segmenter: KFrameSegmenter
    var sendQueue: [[UInt8]] = []
    var sendQueueHead = 0
    var received: [KFrameReassembler.SDU] = []
    var receivedHead = 0
    /// Credits for K-frames whose SDUs the application has consumed, not yet returned.
    var creditsToReturn = 0
    var closeReason: CreditBasedDisconnectReason?
    /// An orderly close was asked for while SDUs were queued: the Disconnection Request goes once
    /// the last of them is out (`CreditBasedChannelManager.disconnect`), and `send` is refused.
    public internal(set) var closesWhenSent = false

    init(localCID: UInt16, psm: SPSM, kind: Kind, isInitiator: Bool, local: CreditBasedChannelParameters) {
        self.localCID = localCID
        self.remoteCID = 0
        self.psm = psm
        self.kind = kind
        self.isInitiator = isInitiator
        self.state = .connecting
        self.reassembler = KFrameReassembler(mtu: local.mtu, mps: local.mps)
        self.segmenter = KFrameSegmenter(mps: 0)
        self.remoteMTU = 0
        self.sendCredits = 0
        self.receiveCredits = local.initialCredits
        self.initialReceiveCredits = local.initialCredits
    }

    /// SDUs queued by `send` and not yet fully segmented.
    public var queuedSendCount: Int { sendQueue.count - sendQueueHead + (segmenter.isSegmenting ? 1 : 0) }
    /// Complete SDUs waiting for the application.
    public var receivedSDUCount: Int { received.count - receivedHead }
    /// Octets the channel holds on the receive side (complete SDUs not yet read plus a partial one).
    public var bufferedReceiveOctets: Int {
        var total = reassembler.bufferedCount
        for i in receivedHead..<received.count { total += received[i].bytes.count }
        return total
    }

    mutating func openWith(remoteCID: UInt16, mtu: Int, mps: Int, credits: Int) {
        self.remoteCID = remoteCID
        self.remoteMTU = mtu
        self.segmenter.mps = mps
        self.sendCredits = credits
        self.state = .open
    }

    mutating func popSendSDU() -> [UInt8]? {
        guard sendQueueHead < sendQueue.count else { return nil }
        let sdu = sendQueue[sendQueueHead]
        sendQueue[sendQueueHead] = []
        sendQueueHead += 1
        if sendQueueHead == sendQueue.count {
            sendQueue.removeAll(keepingCapacity: true)
            sendQueueHead = 0
        }
        return sdu
    }

    mutating func popReceived() -> KFrameReassembler.SDU? {
        guard receivedHead < received.count else { return nil }
        let sdu = received[receivedHead]
        received[receivedHead] = KFrameReassembler.SDU(bytes: [], kFrames: 0)
        receivedHead += 1
        if receivedHead == received.count {
            received.removeAll(keepingCapacity: true)
            receivedHead = 0
        }
        return sdu
    }
}

/// The receive parameters we declare for a channel: MTU, MPS and the credits we grant.
public struct CreditBasedChannelParameters: Hashable, Sendable {
    /// Largest SDU we accept: ≥ 23 for LE Credit Based, ≥ 64 for Enhanced (§4.22, §4.25).
    public var mtu: Int
    /// Largest K-frame payload we accept: 23 (64 enhanced) to 65533.
    public var mps: Int
    /// Credits granted at connection and kept topped up as SDUs are consumed; raised to at least
    /// one whole SDU's worth (⌈(MTU + 2) / MPS⌉) so a full-size SDU can always complete.
    public var initialCredits: Int

    public init(mtu: Int = 512, mps: Int = 247, initialCredits: Int = 16) {
        self.mtu = mtu
        self.mps = mps
        self.initialCredits = initialCredits
    }

    /// The values clamped into the ranges the specification allows for `kind`, credits raised to one
    /// whole SDU and capped at 65535.
    func normalized(for kind: CreditBasedChannel.Kind) -> CreditBasedChannelParameters {
        let floor = kind == .enhancedCreditBased ? 64 : 23
        var copy = self
        copy.mtu = min(max(mtu, floor), 65535)
        copy.mps = min(max(mps, floor), 65533)
        copy.initialCredits = min(max(initialCredits, KFrameSegmenter.kFrameCount(sduLength: copy.mtu, mps: copy.mps)), 65535)
        return copy
    }
}
