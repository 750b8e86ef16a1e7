import BluewireCore

/// Something for the host to do or know, produced by `CreditBasedChannelManager`.
public enum CreditBasedOutput: Hashable, Sendable {
    /// An L2CAP B-frame to send on the link: a signaling command on CID 0x0005 or a K-frame on a
    /// peer's CID. The host fragments it into ACL packets.
    case send(L2CAPBasicFrame)
    case event(CreditBasedChannelEvent)
}

/// Why a channel we asked for did not open.
public enum CreditBasedConnectionFailure: Hashable, Sendable {
    /// LE Credit Based Connection Response refusal (§4.23).
    case refused(LECreditBasedConnectionResult)
    /// Credit Based Connection Response refusal (§4.26), whole request or this channel.
    case refusedEnhanced(CreditBasedConnectionResult)
    /// The peer answered with Command Reject.
    case rejected(LESignalingRejectReason)
    /// No response within the RTX timeout (§6.2.1).
    case timeout
    /// The response named values the specification forbids; the channel was disconnected.
    case invalidResponse
}

/// Why a channel closed.
public enum CreditBasedDisconnectReason: Hashable, Sendable {
    /// We asked (`disconnect`).
    case local
    /// The peer sent a Disconnection Request.
    case remote
    /// The peer broke flow control and we disconnected the channel, as §10.1 requires.
    case violation(CreditBasedFlowViolation)
    /// The response to our Disconnection Request never came (the channel is closed anyway).
    case timeout
    /// The ACL link went down.
    case linkClosed
}

/// Channel events.
public enum CreditBasedChannelEvent: Hashable, Sendable {
    /// A channel opened; `initiatedLocally` is false for one the peer opened to a registered PSM.
    case connected(localCID: UInt16, psm: SPSM, initiatedLocally: Bool)
    /// A channel we asked for did not open (for an enhanced request, one event per channel).
    case connectionFailed(localCID: UInt16, psm: SPSM, reason: CreditBasedConnectionFailure)
    /// The peer asked for channels and we refused them all with this result.
    case incomingConnectionRefused(psm: SPSM, result: CreditBasedConnectionResult)
    case disconnected(localCID: UInt16, reason: CreditBasedDisconnectReason)
    /// A complete SDU waits on the channel: read it with `readSDU(on:)`.
    case sduReceived(localCID: UInt16)
    /// The last K-frame of a queued SDU went out.
    case sduSent(localCID: UInt16)
    /// New MTU/MPS in force: our receive side after our request succeeded (`byPeer` false), the
    /// peer's after its request (`byPeer` true).
    case reconfigured(localCIDs: [UInt16], mtu: Int, mps: Int, byPeer: Bool)
    case reconfigureFailed(localCIDs: [UInt16], result: CreditBasedReconfigureResult?)
    /// Anything else on the signaling channel (Connection Parameter Update and the like), from the
    /// embedded `LESignalingResponder`.
    case signaling(LESignalingEvent)
}

/// A local call the manager cannot carry out.
public enum CreditBasedChannelError: Error, Hashable, Sendable {
    /// SPSM 0x0000 or above 0x00FF (§4.22).
    case invalidPSM(SPSM)
    case psmAlreadyRegistered(SPSM)
    /// All 64 LE dynamic CIDs (0x0040–0x007F) are in use.
    case noFreeChannelID
    /// An enhanced request carries one to five channels (§4.25).
    case invalidChannelCount(Int)
    case unknownChannel(UInt16)
    /// The channel is not open: not yet, no longer, or closing (an orderly close is draining its
    /// queued SDUs, which refuses new ones).
    case channelNotOpen(UInt16)
    /// The SDU is larger than the peer's MTU.
    case sduExceedsMTU(length: Int, mtu: Int)
    /// Reconfiguration is for open enhanced channels; the MTU may not shrink and the MPS may shrink
    /// only for one channel at a time (§4.27).
    case invalidReconfiguration
}
