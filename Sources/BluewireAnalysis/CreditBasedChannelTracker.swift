import BluewireCore

/// Credit based channels as a capture shows them (Core Vol 3 Part A §4.22–4.27, §10.1): the LE and
/// enhanced credit based connection requests and responses on the LE signaling channel make channels,
/// disconnection ends them, and the K-frames on their CIDs are told apart as SDU starts (with the
/// 2-octet SDU length, §3.4.3) and continuations. `decode` uses it to describe each K-frame; `analyze`
/// reports the channels per connection.
///
/// Directions are the capture's: outbound frames go from the host (the local side) to the controller,
/// inbound ones come from the peer. A local CID is where inbound K-frames arrive; a remote CID is where
/// outbound ones go.
public struct CreditBasedChannelTracker: Sendable {
    /// One channel, with what it carried.
    public struct Channel: Hashable, Sendable {
        public var handle: UInt16
        /// The SPSM the initiator asked for (0x0027: an Enhanced ATT bearer).
        public var psm: UInt16
        public var localCID: UInt16
        public var remoteCID: UInt16
        /// The local side asked for it.
        public var openedLocally: Bool
        /// Made by an Enhanced Credit Based Connection Request (§4.25) rather than an LE one (§4.22).
        public var enhanced: Bool
        /// MTU/MPS the local side can receive, and the peer's.
        public var localMTU: UInt16, localMPS: UInt16
        public var remoteMTU: UInt16, remoteMPS: UInt16
        /// Credits the local side gave the peer (initial and Flow Control Credit Ind), and the peer's.
        public var creditsGiven: Int, creditsReceived: Int
        public var sdusSent = 0, sdusReceived = 0
        public var octetsSent = 0, octetsReceived = 0
        public var kFramesSent = 0, kFramesReceived = 0
        /// Records of the response that opened it and the disconnection that ended it.
        public var openedAtRecord: Int
        public var closedAtRecord: Int?
        /// Who the caller said the channel belongs to (`analyze`: the connection index).
        public var tag: Int
    }

    /// What a K-frame is within its channel's SDUs.
    public struct KFrame: Sendable {
        public var channel: Channel
        /// The frame starts an SDU: its first two octets are the SDU length.
        public var sduLength: Int?
        /// The SDU is complete with this frame.
        public var completesSDU: Bool
    }

    struct Pending: Sendable {
        var handle: UInt16
        var identifier: UInt8
        var outbound: Bool
        var psm: UInt16
        var sourceCIDs: [UInt16]
        var mtu: UInt16, mps: UInt16, credits: UInt16
        var enhanced: Bool
    }

    public private(set) var channels: [Channel] = []
    var pending: [Pending] = []
    /// Octets still missing of the SDU in progress, per channel index and direction.
    var remainingOutbound: [Int: Int] = [:]
    var remainingInbound: [Int: Int] = [:]

    public init() {}

    /// Open channels' indexes by (handle, CID) on either side.
    func openIndex(handle: UInt16, localCID: UInt16? = nil, remoteCID: UInt16? = nil) -> Int? {
        channels.lastIndex { channel in
            channel.handle == handle && channel.closedAtRecord == nil
                && (localCID.map { channel.localCID == $0 } ?? true) && (remoteCID.map { channel.remoteCID == $0 } ?? true)
        }
    }

    /// A C-frame on the LE signaling channel (CID 0x0005) of `handle`.
    public mutating func signaling(_ payload: ArraySlice<UInt8>, handle: UInt16, outbound: Bool, record: Int, tag: Int = 0) {
        var reader = ByteReader(payload, layer: "l2cap")
        guard let code = try? reader.readUInt8("code"), let identifier = try? reader.readUInt8("identifier"),
              let length = try? reader.readUInt16("length"), let data = try? reader.readBytes(Int(length), "data") else { return }
        var r = ByteReader(data, layer: "l2cap")
        func u16() -> UInt16? { try? r.readUInt16("field") }
        func cids() -> [UInt16] {
            var list: [UInt16] = []
            while let cid = u16(), list.count < 5 { list.append(cid) }
            return list
        }
        switch code {
        case 0x14:  // LE Credit Based Connection Request (§4.22)
            guard let psm = u16(), let scid = u16(), let mtu = u16(), let mps = u16(), let credits = u16() else { return }
            remember(Pending(handle: handle, identifier: identifier, outbound: outbound, psm: psm, sourceCIDs: [scid],
                             mtu: mtu, mps: mps, credits: credits, enhanced: false))
        case 0x17:  // Credit Based Connection Request (§4.25)
            guard let psm = u16(), let mtu = u16(), let mps = u16(), let credits = u16() else { return }
            remember(Pending(handle: handle, identifier: identifier, outbound: outbound, psm: psm, sourceCIDs: cids(),
                             mtu: mtu, mps: mps, credits: credits, enhanced: true))
        case 0x15:  // LE Credit Based Connection Response (§4.23)
            guard let dcid = u16(), let mtu = u16(), let mps = u16(), let credits = u16(), let result = u16(),
                  let request = takePending(handle: handle, identifier: identifier, answeredOutbound: outbound),
                  result == 0 else { return }
            open(request, destinationCIDs: [dcid], mtu: mtu, mps: mps, credits: credits, record: record, tag: tag)
        case 0x18:  // Credit Based Connection Response (§4.26): refused channels have destination CID 0
            guard let mtu = u16(), let mps = u16(), let credits = u16(), u16() != nil,
                  let request = takePending(handle: handle, identifier: identifier, answeredOutbound: outbound) else { return }
            open(request, destinationCIDs: cids(), mtu: mtu, mps: mps, credits: credits, record: record, tag: tag)
        case 0x16:  // Flow Control Credit Ind (§4.24): the CID is the sender's own end
            guard let cid = u16(), let credits = u16() else { return }
            if outbound, let i = openIndex(handle: handle, localCID: cid) {
                channels[i].creditsGiven += Int(credits)
            } else if !outbound, let i = openIndex(handle: handle, remoteCID: cid) {
                channels[i].creditsReceived += Int(credits)
            }
        case 0x07:  // Disconnection Response (§4.7): DCID is the responder's own end
            guard let dcid = u16() else { return }
            let index = outbound ? openIndex(handle: handle, localCID: dcid) : openIndex(handle: handle, remoteCID: dcid)
            if let index { channels[index].closedAtRecord = record }
        default:
            return
        }
    }

    /// A K-frame on a dynamic CID of `handle`; nil when no open channel has that CID.
    public mutating func kFrame(_ payload: ArraySlice<UInt8>, handle: UInt16, cid: UInt16, outbound: Bool) -> KFrame? {
        guard let index = outbound ? openIndex(handle: handle, remoteCID: cid) : openIndex(handle: handle, localCID: cid) else {
            return nil
        }
        let remaining = (outbound ? remainingOutbound[index] : remainingInbound[index]) ?? 0
        var sduLength: Int?
        var left: Int
        if remaining == 0 {
            guard payload.count >= 2 else { return KFrame(channel: channels[index], sduLength: nil, completesSDU: false) }
            let s = payload.startIndex
            let length = Int(UInt16(payload[s]) | UInt16(payload[s &+ 1]) << 8)
            sduLength = length
            left = max(0, length - (payload.count - 2))
        } else {
            left = max(0, remaining - payload.count)
        }
        let completes = left == 0
        if outbound {
            remainingOutbound[index] = left
            channels[index].kFramesSent += 1
            channels[index].octetsSent += payload.count - (sduLength == nil ? 0 : 2)
            if completes { channels[index].sdusSent += 1 }
        } else {
            remainingInbound[index] = left
            channels[index].kFramesReceived += 1
            channels[index].octetsReceived += payload.count - (sduLength == nil ? 0 : 2)
            if completes { channels[index].sdusReceived += 1 }
        }
        return KFrame(channel: channels[index], sduLength: sduLength, completesSDU: completes)
    }

    /// The link ended: its channels with it.
    public mutating func disconnected(handle: UInt16, record: Int) {
        for i in channels.indices where channels[i].handle == handle && channels[i].closedAtRecord == nil {
            channels[i].closedAtRecord = record
        }
        pending.removeAll { $0.handle == handle }
    }

    mutating func remember(_ request: Pending) {
        // A capture of a peer that never answers must not grow this without bound.
        if pending.count >= 64 { pending.removeFirst() }
        pending.append(request)
    }

    mutating func takePending(handle: UInt16, identifier: UInt8, answeredOutbound: Bool) -> Pending? {
        guard let i = pending.firstIndex(where: {
            $0.handle == handle && $0.identifier == identifier && $0.outbound != answeredOutbound
        }) else { return nil }
        return pending.remove(at: i)
    }

    mutating func open(_ request: Pending, destinationCIDs: [UInt16], mtu: UInt16, mps: UInt16, credits: UInt16, record: Int, tag: Int) {
        for (source, destination) in zip(request.sourceCIDs, destinationCIDs) where destination != 0 {
            let local = request.outbound
            channels.append(Channel(
                handle: request.handle, psm: request.psm,
                localCID: local ? source : destination, remoteCID: local ? destination : source,
                openedLocally: local, enhanced: request.enhanced,
                localMTU: local ? request.mtu : mtu, localMPS: local ? request.mps : mps,
                remoteMTU: local ? mtu : request.mtu, remoteMPS: local ? mps : request.mps,
                creditsGiven: Int(local ? request.credits : credits), creditsReceived: Int(local ? credits : request.credits),
                openedAtRecord: record, tag: tag))
        }
    }
}
