import BluewireCore

extension CreditBasedChannelManager {
    /// Grants the peer `credits` more K-frames on an open channel with an LE Flow Control Credit Ind
    /// (Core Vol 3 Part A §4.24), beyond those `readSDU` returns as SDUs are consumed. The peer may
    /// hold at most 65535 credits (§10.1), so the grant is cut to that; nothing is sent for zero.
    /// Credits granted this way raise the channel's receive memory above `initialReceiveCredits × MPS`.
    public mutating func grantCredits(_ credits: Int, on localCID: UInt16) throws(CreditBasedChannelError) {
        guard var channel = channels[localCID] else { throw .unknownChannel(localCID) }
        guard channel.state == .open else { throw .channelNotOpen(localCID) }
        let granted = min(max(credits, 0), 65535 - channel.receiveCredits)
        guard granted > 0 else { return }
        channel.receiveCredits += granted
        channels[localCID] = channel
        sendCommand(LESignalingCommand(identifier: allocateIdentifier(), body: .flowControlCreditIndication(
            cid: localCID, credits: UInt16(granted))))
    }
}
