import BluewireATT
import BluewireCore
import BluewireHCI
import BluewireL2CAP

// Left out of builds with BLUEWIRE_NO_CHANNELS (the firmware images); HostEngine+NoChannels stands in.
#if !BLUEWIRE_NO_CHANNELS

/// The credit based L2CAP channels of every link (Core Vol 3 Part A §4.22–4.28, §10.1), wired to
/// the data path: LE signaling (CID 0x0005) and K-frames on dynamic CIDs go to the link's
/// `CreditBasedChannelManager`; what it sends goes through the fragmenter and the ACL credits like
/// every other PDU; its events become engine events and request completions.
extension HostEngine {
    // MARK: input

    /// LE signaling (Core Vol 3 Part A §4). The channel manager answers credit based commands and
    /// hands the rest to its `LESignalingResponder`: a peripheral's Connection Parameter Update
    /// Request accepted by a central becomes LE Connection Update (Vol 4 Part E §7.8.18).
    mutating func receiveSignaling(handle: UInt16, payload: ArraySlice<UInt8>) {
        guard let index = links.index(forKey: handle) else { return }
        links.values[index].channels.manager.receive(channelID: .leSignaling, payload: payload, now: now)
        drainChannels(handle: handle)
        // LE Flow Control Credit Ind (§4.24): the peer granted credits; say how many we hold now.
        if let command = try? LESignalingCommand(decoding: payload),
           case .flowControlCreditIndication(let remote, _) = command.body,
           let channel = channel(connection: handle, remoteCID: remote) {
            emit(.channelCredits(connection: handle, cid: channel.localCID, credits: channel.sendCredits))
        }
    }

    /// A B-frame on a dynamic CID: a K-frame for one of the link's channels (§3.4). Frames for a
    /// CID no channel has are dropped (§3.4.3 has the receiver ignore them).
    mutating func receiveChannelFrame(handle: UInt16, channelID: L2CAPChannelID, payload: ArraySlice<UInt8>) {
        guard let index = links.index(forKey: handle) else { return }
        guard links.values[index].channels.manager.receive(channelID: channelID, payload: payload, now: now) else { return }
        drainChannels(handle: handle)
    }

    func channel(connection: UInt16, remoteCID: UInt16) -> CreditBasedChannel? {
        guard let manager = links[connection]?.channels.manager else { return nil }
        for cid in manager.channelIDs {
            if let channel = manager.channel(cid), channel.remoteCID == remoteCID, channel.state == .open { return channel }
        }
        return nil
    }

    // MARK: output

    /// Acts on everything the link's channel manager produced: frames to send, channel events.
    mutating func drainChannels(handle: UInt16) {
        while let index = links.index(forKey: handle), let output = links.values[index].channels.manager.nextOutput() {
            switch output {
            case .send(let frame):
                // A Disconnection Request waits in the channels' lane, behind every K-frame already
                // queued there: on the fixed lane it would overtake its own channel's data, and the
                // peer would drop the rest of the last SDU on a closed channel.
                let closes = frame.channelID == .leSignaling && frame.payload.first == LESignalingCode.disconnectionRequest.rawValue
                sendL2CAP(handle: handle, channel: frame.channelID, payload: Array(frame.payload), lane: closes ? .channels : nil)
            case .event(let event):
                channelEvent(event, handle: handle)
            }
        }
    }

    mutating func channelEvent(_ event: CreditBasedChannelEvent, handle: UInt16) {
        switch event {
        case .connected(let cid, _, let initiatedLocally):
            channelConnected(cid, handle: handle, initiatedLocally: initiatedLocally)
        case .connectionFailed(let cid, _, let reason):
            channelConnectionFailed(cid, reason, handle: handle)
        case .disconnected(let cid, let reason):
            guard let index = links.index(forKey: handle) else { return }
            let requests = links.values[index].channels.forget(cid)
            channelClosed(cid, reason, handle: handle, requests: requests)
        case .sduReceived(let cid):
            deliverSDUs(cid, handle: handle)
        case .sduSent(let cid):
            guard let index = links.index(forKey: handle) else { return }
            if let id = links.values[index].channels.sendRequests[cid]?.first {
                links.values[index].channels.sendRequests[cid]?.removeFirst()
                complete(id, .success(.done))
            }
        case .signaling(.updateConnectionParameters(let parameters)):
            let update = LEConnectionUpdate(connectionHandle: handle, connection: LEConnectionParameters(
                connectionIntervalMin: parameters.intervalMin, connectionIntervalMax: parameters.intervalMax,
                maxLatency: parameters.latency, supervisionTimeout: parameters.timeoutMultiplier))
            enqueue(nil, .bestEffort, [.leConnectionUpdate(update)], optional: true)
        case .reconfigured(let cids, let mtu, let mps, let byPeer):
            channelsReconfigured(cids, mtu: mtu, mps: mps, byPeer: byPeer, handle: handle)
        case .reconfigureFailed(let cids, let result):
            guard let id = takeReconfigureRequest(cids, handle: handle) else { return }
            complete(id, .failure(.channelReconfigurationRefused(result)))
        case .incomingConnectionRefused, .signaling:
            break
        }
    }

    mutating func channelConnected(_ cid: UInt16, handle: UInt16, initiatedLocally: Bool) {
        guard let index = links.index(forKey: handle), let open = links.values[index].channels.manager.channel(cid) else { return }
        let channel = HostChannel(connection: handle, open)
        // Enhanced ATT: an enhanced channel on 0x0027, either side's, is an ATT bearer (HostEngine+EATT).
        if channel.psm == .eatt && channel.isEnhanced {
            openEATTBearer(channel)
        } else if !initiatedLocally && consumptionPacedServices.contains(channel.psm) {
            links.values[index].channels.heldCredits[cid] = []
        }
        emit(.channelOpened(channel))
        guard initiatedLocally else { return }
        if let id = links.values[index].channels.openRequests.removeValue(forKey: cid) {
            return complete(id, .success(.channelOpened(channel)))
        }
        settleEnhanced(cid, handle: handle) { $0.opened.append(channel) }
    }

    mutating func channelConnectionFailed(_ cid: UInt16, _ reason: CreditBasedConnectionFailure, handle: UInt16) {
        guard let index = links.index(forKey: handle) else { return }
        links.values[index].channels.heldCredits[cid] = nil
        if let id = links.values[index].channels.openRequests.removeValue(forKey: cid) {
            return complete(id, .failure(.channelRefused(reason)))
        }
        settleEnhanced(cid, handle: handle) { $0.failure = $0.failure ?? reason }
    }

    /// New MTU/MPS on enhanced channels (§4.27): ours after our request, the peer's after its own.
    /// An EATT bearer's ATT_MTU follows the smaller channel MTU (Vol 3 Part G §5.3.1).
    mutating func channelsReconfigured(_ cids: [UInt16], mtu: Int, mps: Int, byPeer: Bool, handle: UInt16) {
        guard let index = links.index(forKey: handle) else { return }
        for cid in cids where links.values[index].channels.eattBearers[cid] != nil {
            guard let channel = links.values[index].channels.manager.channel(cid) else { continue }
            links.values[index].channels.eattBearers[cid]?.setEnhancedBearerMTU(min(channel.localMTU, channel.remoteMTU))
        }
        emit(.channelsReconfigured(connection: handle, cids: cids, mtu: mtu, mps: mps, byPeer: byPeer))
        if !byPeer, let id = takeReconfigureRequest(cids, handle: handle) { complete(id, .success(.done)) }
    }

    mutating func takeReconfigureRequest(_ cids: [UInt16], handle: UInt16) -> HostRequestID? {
        guard let index = links.index(forKey: handle),
              let slot = links.values[index].channels.reconfigureRequests.firstIndex(where: { $0.cids == cids })
        else { return nil }
        return links.values[index].channels.reconfigureRequests.remove(at: slot).id
    }

    /// One channel of an enhanced request settled; the request completes once all have: with the
    /// channels that opened, or with the first failure when none did.
    mutating func settleEnhanced(_ cid: UInt16, handle: UInt16, _ update: (inout EnhancedOpenRequest) -> Void) {
        guard let index = links.index(forKey: handle),
              let slot = links.values[index].channels.enhancedRequests.firstIndex(where: { $0.waiting.contains(cid) })
        else { return }
        var request = links.values[index].channels.enhancedRequests[slot]
        request.waiting.removeAll { $0 == cid }
        update(&request)
        guard request.waiting.isEmpty else {
            links.values[index].channels.enhancedRequests[slot] = request
            return
        }
        links.values[index].channels.enhancedRequests.remove(at: slot)
        if request.opened.isEmpty {
            complete(request.id, .failure(.channelRefused(request.failure ?? .invalidResponse)))
        } else {
            complete(request.id, .success(.channelsOpened(request.opened)))
        }
    }

    /// A channel closed: SDUs still queued for it fail, a close request completes.
    mutating func channelClosed(
        _ cid: UInt16, _ reason: CreditBasedDisconnectReason, handle: UInt16, requests: ClosedChannelRequests
    ) {
        for id in requests.sends { complete(id, .failure(.channelClosed(reason))) }
        for id in requests.operations { complete(id, .failure(.channelClosed(reason))) }
        for id in requests.closes { complete(id, .success(.done)) }
        emit(.channelClosed(connection: handle, cid: cid, reason: reason))
    }

    /// Complete SDUs are handed over at once: an EATT channel's to its ATT bearer, any other's as
    /// `.channelSDU`. Their credits go back to the peer at once (§10.1), or, on a channel whose
    /// credits return `.onConsumption`, when the application says it consumed them.
    mutating func deliverSDUs(_ cid: UInt16, handle: UInt16) {
        if links[handle]?.channels.heldCredits[cid] != nil {
            while let index = links.index(forKey: handle), let sdu = links.values[index].channels.manager.takeSDU(on: cid) {
                links.values[index].channels.heldCredits[cid]?.append(sdu.kFrames)
                emit(.channelSDU(connection: handle, cid: cid, sdu: sdu.bytes))
            }
            return
        }
        while let index = links.index(forKey: handle), let sdu = links.values[index].channels.manager.readSDU(on: cid) {
            if links.values[index].channels.eattBearers[cid] != nil {
                receiveEATT(sdu, cid: cid, handle: handle)
            } else {
                emit(.channelSDU(connection: handle, cid: cid, sdu: sdu))
            }
        }
    }

    /// The ACL link went down (Disconnection Complete): every channel closes with `.linkClosed`,
    /// every request waiting on one fails with the link's reason.
    mutating func channelsLinkDown(_ link: inout EngineLink, reason: HCIStatus) {
        let handle = link.handle
        for id in link.channels.openRequests.values.sorted(by: { $0.rawValue < $1.rawValue }) {
            complete(id, .failure(.disconnected(reason)))
        }
        for request in link.channels.enhancedRequests { complete(request.id, .failure(.disconnected(reason))) }
        for request in link.channels.reconfigureRequests { complete(request.id, .failure(.disconnected(reason))) }
        link.channels.reconfigureRequests = []
        link.channels.openRequests = [:]
        link.channels.enhancedRequests = []
        link.channels.manager.linkDisconnected()
        while let output = link.channels.manager.nextOutput() {
            guard case .event(.disconnected(let cid, let closeReason)) = output else { continue }
            channelClosed(cid, closeReason, handle: handle, requests: link.channels.forget(cid))
        }
    }

    // MARK: time

    /// The earliest RTX/ERTX deadline of any link's signaling requests (Core Vol 3 Part A §6.2.1)
    /// or ATT transaction on an EATT bearer (Part F §3.3.3).
    var channelDeadline: MonotonicInstant? {
        var earliest: MonotonicInstant?
        func consider(_ deadline: MonotonicInstant?) {
            guard let deadline else { return }
            if let current = earliest, current <= deadline { return }
            earliest = deadline
        }
        for index in links.indices {
            consider(links.values[index].channels.manager.deadline)
            for bearer in links.values[index].channels.eattBearers.values { consider(bearer.deadline) }
        }
        return earliest
    }

    /// Fires every signaling timeout due: a connection request unanswered fails, a disconnection
    /// unanswered completes anyway.
    mutating func advanceChannelTimers() {
        // Looked for first, then acted on in handle order: a packet with no channel timer due
        // (every packet, nearly) sorts nothing and allocates nothing here.
        let now = self.now
        guard links.values.contains(where: { link in link.channels.manager.deadline.map { $0 <= now } ?? false }) else {
            advanceEATTTimers()
            return
        }
        for handle in links.sortedKeys {
            guard let index = links.index(forKey: handle), let deadline = links.values[index].channels.manager.deadline,
                  deadline <= now
            else { continue }
            links.values[index].channels.manager.advanceTime(to: now)
            drainChannels(handle: handle)
        }
        advanceEATTTimers()
    }
}

#endif  // !BLUEWIRE_NO_CHANNELS
