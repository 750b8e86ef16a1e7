import BluewireATT
import BluewireCore
import BluewireL2CAP

// Left out of builds with BLUEWIRE_NO_CHANNELS (the firmware images); HostEngine+NoChannels stands in.
#if !BLUEWIRE_NO_CHANNELS

/// An Enhanced Credit Based connection request of ours waiting for its response (§4.25): it
/// completes once every channel it named opened or failed.
struct EnhancedOpenRequest: Sendable {
    var id: HostRequestID
    var waiting: [UInt16]
    var opened: [HostChannel] = []
    var failure: CreditBasedConnectionFailure?
}

/// The credit based channels of one link, with the engine's bookkeeping around the sans-I/O
/// `CreditBasedChannelManager`, which also answers every other LE signaling command (Core Vol 3
/// Part A §4) through its embedded `LESignalingResponder`.
struct LinkChannels: Sendable {
    var manager: CreditBasedChannelManager
    /// LE Credit Based connection requests by local CID.
    var openRequests: [UInt16: HostRequestID] = [:]
    var enhancedRequests: [EnhancedOpenRequest] = []
    /// Per channel, in order, the request of each SDU queued (nil for the engine's own SDUs, such
    /// as EATT PDUs): the manager reports `sduSent` once per SDU, in the order they were queued.
    var sendRequests: [UInt16: [HostRequestID?]] = [:]
    var closeRequests: [UInt16: [HostRequestID]] = [:]
    /// Our Credit Based Reconfigure Requests, by the channels they name.
    var reconfigureRequests: [(cids: [UInt16], id: HostRequestID)] = []
    /// An ATT bearer per Enhanced ATT channel (SPSM 0x0027), Core Vol 3 Part G §5.3.2.
    var eattBearers: [UInt16: ATTBearer] = [:]
    /// GATT client operations per EATT bearer, the head one in progress (HostEngine+EATTClient).
    var eattClientOperations: [UInt16: [ClientOperation]] = [:]
    /// Channels whose credits return `.onConsumption`: per channel, the K-frames each SDU delivered
    /// and not yet consumed took, oldest first (at most the initial credits' worth in all).
    var heldCredits: [UInt16: [Int]] = [:]
    /// `.gattOnAnyEATTBearer` operations waiting for a free bearer, oldest first.
    var sharedEATTOperations: [(id: HostRequestID, operation: GATTClientRequest)] = []

    init(role: HostLinkRole) {
        manager = CreditBasedChannelManager(role: role == .central ? .central : .peripheral)
    }

    /// A channel closed: drops its bearer and returns the requests still waiting on it.
    mutating func forget(_ cid: UInt16) -> ClosedChannelRequests {
        let wasBearer = eattBearers.removeValue(forKey: cid) != nil
        heldCredits[cid] = nil
        var operations = (eattClientOperations.removeValue(forKey: cid) ?? []).compactMap { $0.id }
        // The last bearer gone: operations waiting for any bearer have none left to run on.
        if wasBearer && eattBearers.isEmpty {
            operations += sharedEATTOperations.map { $0.id }
            sharedEATTOperations = []
        }
        return ClosedChannelRequests(
            sends: sendRequests.removeValue(forKey: cid) ?? [], closes: closeRequests.removeValue(forKey: cid) ?? [],
            operations: operations)
    }
}

/// The requests a closed channel leaves behind: SDUs not sent, close requests, GATT operations.
struct ClosedChannelRequests: Sendable {
    var sends: [HostRequestID?]
    var closes: [HostRequestID]
    var operations: [HostRequestID]
}

#endif  // !BLUEWIRE_NO_CHANNELS
