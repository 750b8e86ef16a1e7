/// A breach of LE credit based flow control by the peer (Core Vol 3 Part A §3.4.3 and §10.1). Each
/// one obliges the receiver to disconnect the channel; the link and the other channels stay up.
public enum CreditBasedFlowViolation: Error, Hashable, Sendable, CustomStringConvertible {
    /// A K-frame arrived while the peer had no credit left (§10.1: "If a K-frame is received when
    /// the credit count is zero ... the receiving device shall disconnect the channel").
    case kFrameWithoutCredit
    /// A Flow Control Credit Ind took the peer's credits past 65535 (§4.24/§10.1: the receiver of
    /// the credits shall disconnect the channel).
    case creditOverflow(credits: Int)
    /// A K-frame's information payload exceeded our MPS (§3.4.3).
    case kFrameLongerThanMPS(length: Int, mps: Int)
    /// The SDU Length of a first K-frame exceeded our MTU (§3.4.3).
    case sduLengthExceedsMTU(sduLength: Int, mtu: Int)
    /// The K-frames of an SDU carried more octets than its SDU Length (§3.4.3).
    case sduLongerThanDeclared(sduLength: Int, received: Int)
    /// A first K-frame too short to hold the 2-octet SDU Length field.
    case missingSDULength(length: Int)

    public var description: String {
        switch self {
        case .kFrameWithoutCredit: return "K-frame received with no credit"
        case .creditOverflow(let credits): return "credit count \(credits) exceeds 65535"
        case .kFrameLongerThanMPS(let length, let mps): return "K-frame of \(length) octets exceeds MPS \(mps)"
        case .sduLengthExceedsMTU(let sduLength, let mtu): return "SDU Length \(sduLength) exceeds MTU \(mtu)"
        case .sduLongerThanDeclared(let sduLength, let received):
            return "K-frames carry \(received) octets for an SDU Length of \(sduLength)"
        case .missingSDULength(let length): return "first K-frame of \(length) octet(s) has no SDU Length"
        }
    }
}
