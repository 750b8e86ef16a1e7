import BluewireATT
import BluewireCore
import BluewireL2CAP

/// An open credit based L2CAP channel as the engine reports it (Core Vol 3 Part A §4.22–4.26,
/// §10.1): LE Credit Based (one channel per request) or Enhanced Credit Based (up to five).
public struct HostChannel: Hashable, Sendable {
    /// The link it runs on.
    public var connection: UInt16
    /// Our CID (0x0040–0x007F): the name of the channel in every request and event.
    public var cid: UInt16
    /// The peer's CID: the destination of our K-frames.
    public var remoteCID: UInt16
    public var psm: SPSM
    /// True for an Enhanced Credit Based channel (§4.25), false for LE Credit Based (§4.22).
    public var isEnhanced: Bool
    /// True when we sent the connection request; false for a channel a peer opened to a registered SPSM.
    public var initiatedLocally: Bool
    /// The largest SDU / K-frame payload we accept.
    public var mtu: Int
    public var mps: Int
    /// The largest SDU / K-frame payload the peer accepts: SDUs we send may be at most `peerMTU`,
    /// and are cut into K-frames of at most `peerMPS` octets.
    public var peerMTU: Int
    public var peerMPS: Int
    /// K-frames we may send now (the peer's initial credits when the channel opens).
    public var peerCredits: Int

    public init(
        connection: UInt16, cid: UInt16, remoteCID: UInt16, psm: SPSM, isEnhanced: Bool, initiatedLocally: Bool,
        mtu: Int, mps: Int, peerMTU: Int, peerMPS: Int, peerCredits: Int
    ) {
        self.connection = connection
        self.cid = cid
        self.remoteCID = remoteCID
        self.psm = psm
        self.isEnhanced = isEnhanced
        self.initiatedLocally = initiatedLocally
        self.mtu = mtu
        self.mps = mps
        self.peerMTU = peerMTU
        self.peerMPS = peerMPS
        self.peerCredits = peerCredits
    }

    init(connection: UInt16, _ channel: CreditBasedChannel) {
        self.init(
            connection: connection, cid: channel.localCID, remoteCID: channel.remoteCID, psm: channel.psm,
            isEnhanced: channel.kind == .enhancedCreditBased, initiatedLocally: channel.isInitiator,
            mtu: channel.localMTU, mps: channel.localMPS, peerMTU: channel.remoteMTU, peerMPS: channel.remoteMPS,
            peerCredits: channel.sendCredits)
    }
}

/// What waits to go out on a channel: what throughput code paces on. An SDU waits in the channel
/// until the peer grants credits for its K-frames (§10.1); K-frames sent wait as ACL packets in the
/// link's queue until the controller has buffers (Core Vol 4 Part E §4.1.1).
public struct HostChannelBacklog: Hashable, Sendable {
    /// SDUs queued on the channel and not yet fully cut into K-frames (one partly sent counts).
    public var queuedSDUs: Int
    /// K-frames the peer lets us send now.
    public var sendCredits: Int
    /// ACL packets of the whole link waiting for controller buffers.
    public var queuedACLPackets: Int

    public init(queuedSDUs: Int, sendCredits: Int, queuedACLPackets: Int) {
        self.queuedSDUs = queuedSDUs
        self.sendCredits = sendCredits
        self.queuedACLPackets = queuedACLPackets
    }
}

/// When the credits of a received SDU go back to the peer (Core Vol 3 Part A §10.1: the receiver
/// grants credits with LE Flow Control Credit Ind, §4.24, as it makes room).
public enum HostChannelCreditReturn: Hashable, Sendable {
    /// As the engine hands the SDU over (`.channelSDU`): the peer is paced by the link only, and
    /// an application slower than the link buffers without bound.
    case onDelivery
    /// When the application says it consumed the SDU (`.consumedSDUs`): a slow reader slows the
    /// peer, and SDUs delivered but not consumed never exceed the initial credits' worth of
    /// K-frames (back-pressure, bounded memory per channel).
    case onConsumption
}
