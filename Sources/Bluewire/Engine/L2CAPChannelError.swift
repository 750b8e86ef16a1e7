import BluewireHCI
import BluewireHostEngine
import BluewireL2CAP

/// Why a credit based channel could not be opened, or why it ended, or why an SDU did not go out
/// (Core Vol 3 Part A §4.22–4.24, §10.1).
public enum L2CAPChannelError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The peer did not open the channel: refused with a result (§4.23 Table 4.16, e.g. "SPSM not
    /// supported"), rejected the command, sent an invalid response, or never answered (RTX).
    case refused(CreditBasedConnectionFailure)
    /// The channel closed: by the peer, by us, after a flow-control violation (§10.1), or after an
    /// unanswered Disconnection Request.
    case closed(CreditBasedDisconnectReason)
    /// The ACL link went down with this reason (Disconnection Complete, Vol 4 Part E §7.7.5).
    case disconnected(HCIStatus)
    /// The SDU is longer than the peer's MTU: the peer would have to close the channel (§3.4.3).
    case sduTooLong(length: Int, peerMTU: Int)
    /// The task waiting for SDUs was cancelled.
    case cancelled
    /// The engine refused the request (unknown link, no free CID, invalid SPSM, host closed...).
    case engine(HostEngineError)

    public var description: String {
        switch self {
        case .refused(.refused(let result)): "refused: \(result)"
        case .refused(.refusedEnhanced(let result)): "refused: \(result)"
        case .refused(let failure): "not opened: \(failure)"
        case .closed(.remote): "closed by the peer"
        case .closed(.local): "closed"
        case .closed(.violation(let violation)): "closed: \(violation)"
        case .closed(.timeout): "closed: the peer did not answer the Disconnection Request"
        case .closed(.linkClosed): "closed: the link went down"
        case .disconnected(let status): "disconnected: \(status)"
        case .sduTooLong(let length, let peerMTU): "an SDU of \(length) octets exceeds the peer's MTU of \(peerMTU)"
        case .cancelled: "cancelled"
        case .engine(let error): "\(error)"
        }
    }
}
