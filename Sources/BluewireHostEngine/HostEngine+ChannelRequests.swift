import BluewireCore
import BluewireL2CAP

// Left out of builds with BLUEWIRE_NO_CHANNELS (the firmware images); HostEngine+NoChannels stands in.
#if !BLUEWIRE_NO_CHANNELS

/// The application's requests on credit based channels (Core Vol 3 Part A §4.22–4.28, §10.1), and
/// what the engine tells about them.
extension HostEngine {
    // MARK: servers

    /// Accepts channels to `spsm` on every link, now and later (§4.22, §4.25: a request for an SPSM
    /// nobody registered is refused with "SPSM not supported"). SPSM 0x0027 (EATT) serves ATT on
    /// every enhanced channel opened to it (Vol 3 Part G §5.3.2).
    mutating func registerChannelServer(
        _ id: HostRequestID, _ spsm: SPSM, _ parameters: CreditBasedChannelParameters, _ security: L2CAPSecurityRequirement,
        _ creditReturn: HostChannelCreditReturn, maximumChannels: Int?
    ) {
        guard spsm.isValid else { return complete(id, .failure(.channel(.invalidPSM(spsm)))) }
        guard channelServices[spsm] == nil else { return complete(id, .failure(.channel(.psmAlreadyRegistered(spsm)))) }
        let service = CreditBasedChannelManager.Service(parameters: parameters, security: security, maximumChannels: maximumChannels)
        channelServices[spsm] = service
        if creditReturn == .onConsumption { consumptionPacedServices.insert(spsm) }
        for index in links.indices { try? links.values[index].channels.manager.register(psm: spsm, service: service) }
        complete(id, .success(.done))
    }

    /// Refuses new channels to `spsm` (open channels stay open).
    mutating func unregisterChannelServer(_ id: HostRequestID, _ spsm: SPSM) {
        channelServices[spsm] = nil
        consumptionPacedServices.remove(spsm)
        for index in links.indices { links.values[index].channels.manager.unregister(psm: spsm) }
        complete(id, .success(.done))
    }

    /// A new link listens on every registered SPSM.
    mutating func installChannelServices(handle: UInt16) {
        guard let index = links.index(forKey: handle) else { return }
        for (spsm, service) in channelServices {
            try? links.values[index].channels.manager.register(psm: spsm, service: service)
        }
    }

    // MARK: opening and closing

    /// LE Credit Based Connection Request (§4.22); completes with the channel once the response
    /// opened it, or with why not (refused, Command Reject, RTX timeout).
    mutating func openChannel(
        _ id: HostRequestID, _ handle: UInt16, _ spsm: SPSM, _ parameters: CreditBasedChannelParameters,
        _ creditReturn: HostChannelCreditReturn
    ) {
        guard let index = links.index(forKey: handle) else { return complete(id, .failure(.unknownConnection(handle))) }
        do {
            let cid = try links.values[index].channels.manager.connect(psm: spsm, parameters: parameters, now: now)
            links.values[index].channels.openRequests[cid] = id
            if creditReturn == .onConsumption { links.values[index].channels.heldCredits[cid] = [] }
        } catch {
            return complete(id, .failure(.channel(error)))
        }
        drainChannels(handle: handle)
    }

    /// Credit Based Connection Request (§4.25) for 1–5 channels; completes with the channels that
    /// opened (a response may refuse some, §4.26), or fails when none did.
    mutating func openEnhancedChannels(
        _ id: HostRequestID, _ handle: UInt16, _ spsm: SPSM, _ count: Int, _ parameters: CreditBasedChannelParameters
    ) {
        guard let index = links.index(forKey: handle) else { return complete(id, .failure(.unknownConnection(handle))) }
        do {
            let cids = try links.values[index].channels.manager.connectEnhanced(
                psm: spsm, count: count, parameters: parameters, now: now)
            links.values[index].channels.enhancedRequests.append(EnhancedOpenRequest(id: id, waiting: cids))
        } catch {
            return complete(id, .failure(.channel(error)))
        }
        drainChannels(handle: handle)
    }

    /// Disconnection Request (§4.6); completes once the peer answered (or RTX passed). Orderly,
    /// the request waits until the channel's queued SDUs are out (`CreditBasedChannelManager
    /// .disconnect`); abortive, they are dropped. Either way it queues behind the K-frames already
    /// on their way to the controller (`drainChannels`).
    mutating func closeChannel(_ id: HostRequestID, _ handle: UInt16, _ cid: UInt16, abortive: Bool) {
        guard let index = links.index(forKey: handle) else { return complete(id, .failure(.unknownConnection(handle))) }
        do {
            if abortive {
                try links.values[index].channels.manager.abort(cid, now: now)
            } else {
                try links.values[index].channels.manager.disconnect(cid, now: now)
            }
            links.values[index].channels.closeRequests[cid, default: []].append(id)
        } catch {
            return complete(id, .failure(.channel(error)))
        }
        drainChannels(handle: handle)
    }

    /// Credit Based Reconfigure Request (§4.27): raises our MTU (and MPS) on 1–5 open enhanced
    /// channels; completes when the peer accepted (an EATT bearer's ATT_MTU follows, Vol 3 Part G
    /// §5.3.1) or with `.channelReconfigurationRefused`.
    mutating func reconfigureChannels(_ id: HostRequestID, _ handle: UInt16, _ cids: [UInt16], _ mtu: Int, _ mps: Int) {
        guard let index = links.index(forKey: handle) else { return complete(id, .failure(.unknownConnection(handle))) }
        do {
            try links.values[index].channels.manager.reconfigure(cids, mtu: mtu, mps: mps, now: now)
            links.values[index].channels.reconfigureRequests.append((cids, id))
        } catch {
            return complete(id, .failure(.channel(error)))
        }
        drainChannels(handle: handle)
    }

    /// The link's security changed (encryption started or a key with other properties is in use,
    /// Vol 4 Part E §7.7.8): later channel requests are admitted against it (Core Vol 3 Part A §4.23,
    /// §4.26 refuse for insufficient authentication, encryption or key size). Open channels stay.
    public mutating func setLinkSecurity(_ security: L2CAPLinkSecurity, connection: UInt16) {
        guard let index = links.index(forKey: connection) else { return }
        links.values[index].channels.manager.linkSecurity = security
    }

    // MARK: data

    /// Queues an SDU (at most the peer's MTU) on an open channel. Its K-frames go as the peer's
    /// credits allow (§10.1); the request completes when the last one has been handed to the ACL
    /// queue, so an application keeps as many SDUs outstanding as it wants in flight.
    mutating func sendSDU(_ id: HostRequestID?, _ handle: UInt16, _ cid: UInt16, _ sdu: [UInt8]) {
        guard let index = links.index(forKey: handle) else { return complete(id, .failure(.unknownConnection(handle))) }
        links.values[index].channels.sendRequests[cid, default: []].append(id)
        do {
            try links.values[index].channels.manager.send(sdu, on: cid)
        } catch {
            links.values[index].channels.sendRequests[cid]?.removeLast()
            if links.values[index].channels.sendRequests[cid]?.isEmpty == true { links.values[index].channels.sendRequests[cid] = nil }
            return complete(id, .failure(.channel(error)))
        }
        drainChannels(handle: handle)
    }

    /// Grants the peer `credits` more K-frames beyond those the engine returns as it delivers SDUs
    /// (LE Flow Control Credit Ind, §4.24), e.g. to widen the window of a fast sender.
    mutating func giveCredits(_ id: HostRequestID, _ handle: UInt16, _ cid: UInt16, _ credits: Int) {
        guard let index = links.index(forKey: handle) else { return complete(id, .failure(.unknownConnection(handle))) }
        do {
            try links.values[index].channels.manager.grantCredits(credits, on: cid)
        } catch {
            return complete(id, .failure(.channel(error)))
        }
        drainChannels(handle: handle)
        complete(id, .success(.done))
    }

    /// The application consumed `count` SDUs of a `.onConsumption` channel: the K-frames they took
    /// go back to the peer as credits (§4.24, batched by the channel manager). Counting more SDUs than
    /// were delivered releases only those delivered.
    mutating func consumedSDUs(_ id: HostRequestID, _ handle: UInt16, _ cid: UInt16, _ count: Int) {
        guard let index = links.index(forKey: handle) else { return complete(id, .failure(.unknownConnection(handle))) }
        guard var held = links.values[index].channels.heldCredits[cid] else {
            return complete(id, .failure(.channel(.unknownChannel(cid))))
        }
        let taken = min(max(count, 0), held.count)
        var kFrames = 0
        for frames in held.prefix(taken) { kFrames += frames }
        held.removeFirst(taken)
        links.values[index].channels.heldCredits[cid] = held
        links.values[index].channels.manager.releaseCredits(kFrames, on: cid)
        drainChannels(handle: handle)
        complete(id, .success(.done))
    }

    // MARK: inspection

    /// The local CIDs of a link's credit based channels (open or being opened or closed).
    public func channelIDs(connection: UInt16) -> [UInt16] { links[connection]?.channels.manager.channelIDs ?? [] }

    /// An open channel as it stands now (credits change as K-frames go and credits come).
    public func channel(connection: UInt16, cid: UInt16) -> HostChannel? {
        guard let channel = links[connection]?.channels.manager.channel(cid), channel.state == .open else { return nil }
        return HostChannel(connection: connection, channel)
    }

    /// What waits to go out on a channel, for pacing: keep `queuedSDUs` small and the channel
    /// never holds more than the application wants buffered.
    public func channelBacklog(connection: UInt16, cid: UInt16) -> HostChannelBacklog? {
        guard let channel = links[connection]?.channels.manager.channel(cid) else { return nil }
        return HostChannelBacklog(
            queuedSDUs: channel.queuedSendCount, sendCredits: channel.sendCredits,
            queuedACLPackets: aclCredits.queuedCount(handle: connection))
    }
}

#endif  // !BLUEWIRE_NO_CHANNELS
