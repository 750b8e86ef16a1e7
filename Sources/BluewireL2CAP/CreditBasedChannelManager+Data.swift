import BluewireCore

extension CreditBasedChannelManager {
    // MARK: Responses to our requests

    mutating func receiveResponse(
        _ body: LESignalingCommand.Body, to request: PendingRequest, identifier: UInt8, now: MonotonicInstant
    ) {
        switch (request, body) {
        case (.connect(let cids, let psm), .commandReject(let reason, _)):
            failConnecting(cids, psm, .rejected(reason))
        case (.connect(let cids, let psm), .leCreditBasedConnectionResponse(let destination, let mtu, let mps, let credits, let result)):
            guard let cid = cids.first, cids.count == 1 else { return failConnecting(cids, psm, .invalidResponse) }
            guard result == .connectionSuccessful else { return failConnecting(cids, psm, .refused(result)) }
            openInitiated(cid, psm, remote: destination, mtu: Int(mtu), mps: Int(mps), credits: Int(credits), minimum: 23, now: now)
        case (.connect(let cids, let psm), .creditBasedConnectionResponse(let mtu, let mps, let credits, let result, let destinations)):
            if result.isPending {
                pending[identifier] = (request, now + configuration.ertx)
                return
            }
            let remotes = Array(destinations)
            guard !result.refusesAll else { return failConnecting(cids, psm, .refusedEnhanced(result)) }
            guard remotes.count == cids.count else { return failConnecting(cids, psm, .invalidResponse) }
            for (cid, remote) in zip(cids, remotes) {
                if remote == 0 {
                    failConnecting([cid], psm, .refusedEnhanced(result))
                } else {
                    openInitiated(cid, psm, remote: remote, mtu: Int(mtu), mps: Int(mps), credits: Int(credits), minimum: 64, now: now)
                }
            }
        case (.disconnect(let cid), .disconnectionResponse), (.disconnect(let cid), .commandReject):
            finishDisconnect(cid, fallback: .local)
        case (.abandon, .disconnectionResponse), (.abandon, .commandReject):
            break
        case (.reconfigure(let cids, let mtu, let mps), .creditBasedReconfigureResponse(let result)):
            guard result == .reconfigurationSuccessful else {
                return emit(.reconfigureFailed(localCIDs: cids, result: result))
            }
            for cid in cids {
                channels[cid]?.reassembler.mtu = mtu
                channels[cid]?.reassembler.mps = mps
            }
            emit(.reconfigured(localCIDs: cids, mtu: mtu, mps: mps, byPeer: false))
        case (.reconfigure(let cids, _, _), .commandReject):
            emit(.reconfigureFailed(localCIDs: cids, result: nil))
        default:
            // A response of the wrong kind for this identifier: the request stays outstanding.
            pending[identifier] = (request, pending[identifier]?.deadline ?? now + configuration.rtx)
            emit(.signaling(.ignored(body.code)))
        }
    }

    mutating func failConnecting(_ cids: [UInt16], _ psm: SPSM, _ reason: CreditBasedConnectionFailure) {
        for cid in cids where channels[cid]?.state == .connecting {
            channels[cid] = nil
            emit(.connectionFailed(localCID: cid, psm: psm, reason: reason))
        }
    }

    /// A successful response: the peer's CID must be a free LE dynamic CID and its MTU/MPS in range
    /// (§4.23, §4.26); otherwise the channel is opened only to be disconnected at once.
    mutating func openInitiated(
        _ cid: UInt16, _ psm: SPSM, remote: UInt16, mtu: Int, mps: Int, credits: Int, minimum: Int, now: MonotonicInstant
    ) {
        guard var channel = channels[cid], channel.state == .connecting else { return }
        let valid = (0x0040...0x007F).contains(remote) && localCID(forRemote: remote) == nil
            && mtu >= minimum && (minimum...65533).contains(mps)
        guard valid else {
            // The peer believes the channel open: tell it to close, but keep nothing of it here, so
            // that its (possibly duplicate) CID cannot be confused with a real channel's.
            channels[cid] = nil
            emit(.connectionFailed(localCID: cid, psm: psm, reason: .invalidResponse))
            let id = allocateIdentifier()
            pending[id] = (.abandon, now + configuration.rtx)
            sendCommand(LESignalingCommand(identifier: id, body: .disconnectionRequest(destinationCID: remote, sourceCID: cid)))
            return
        }
        channel.openWith(remoteCID: remote, mtu: mtu, mps: mps, credits: credits)
        channels[cid] = channel
        emit(.connected(localCID: cid, psm: psm, initiatedLocally: true))
    }

    // MARK: Flow control

    /// Queues an SDU for the channel and sends as many K-frames as credits allow (§10.1).
    public mutating func send(_ sdu: [UInt8], on localCID: UInt16) throws(CreditBasedChannelError) {
        guard let channel = channels[localCID] else { throw .unknownChannel(localCID) }
        guard channel.state == .open, !channel.closesWhenSent else { throw .channelNotOpen(localCID) }
        guard sdu.count <= channel.remoteMTU else { throw .sduExceedsMTU(length: sdu.count, mtu: channel.remoteMTU) }
        channels[localCID]?.sendQueue.append(sdu)
        pump(localCID)
    }

    /// Takes the oldest complete SDU of the channel. Its K-frames' credits go back to the peer (a
    /// Flow Control Credit Ind) once half the initial credits are due or the peer has none left.
    public mutating func readSDU(on localCID: UInt16) -> [UInt8]? {
        guard var channel = channels[localCID], let sdu = channel.popReceived() else { return nil }
        channel.creditsToReturn += sdu.kFrames
        channels[localCID] = channel
        returnCredits(localCID)
        return sdu.bytes
    }

    /// Takes the oldest complete SDU and keeps its credits back: they return to the peer only when
    /// `releaseCredits(_:on:)` says the application consumed it. A slow reader thus slows the peer
    /// (§10.1 back-pressure) and the SDUs held outside the manager stay within the
    /// `initialReceiveCredits` K-frames the peer may have in flight.
    public mutating func takeSDU(on localCID: UInt16) -> (bytes: [UInt8], kFrames: Int)? {
        guard var channel = channels[localCID], let sdu = channel.popReceived() else { return nil }
        channels[localCID] = channel
        return (sdu.bytes, sdu.kFrames)
    }

    /// Returns the credits of `kFrames` K-frames taken with `takeSDU(on:)` whose SDUs the
    /// application consumed (LE Flow Control Credit Ind, §4.24, once half the initial credits are
    /// due or the peer has none left). Nothing happens on a channel no longer open.
    public mutating func releaseCredits(_ kFrames: Int, on localCID: UInt16) {
        guard kFrames > 0, var channel = channels[localCID], channel.state == .open else { return }
        channel.creditsToReturn += kFrames
        channels[localCID] = channel
        returnCredits(localCID)
    }

    mutating func returnCredits(_ localCID: UInt16) {
        guard var channel = channels[localCID], channel.state == .open, channel.creditsToReturn > 0 else { return }
        let threshold = max(1, channel.initialReceiveCredits / 2)
        guard channel.creditsToReturn >= threshold || channel.receiveCredits == 0 else { return }
        let credits = channel.creditsToReturn
        channel.creditsToReturn = 0
        channel.receiveCredits += credits
        channels[localCID] = channel
        sendCommand(LESignalingCommand(identifier: allocateIdentifier(), body: .flowControlCreditIndication(
            cid: localCID, credits: UInt16(credits))))
    }

    mutating func pump(_ localCID: UInt16) {
        guard var channel = channels[localCID], channel.state == .open else { return }
        while channel.sendCredits > 0 {
            if !channel.segmenter.isSegmenting {
                guard let next = channel.popSendSDU() else { break }
                channel.segmenter.start(next[...])
            }
            guard let payload = channel.segmenter.nextKFrame() else { break }
            channel.sendCredits -= 1
            outputs.append(.send(L2CAPBasicFrame(channelID: L2CAPChannelID(channel.remoteCID), payload: payload)))
            if !channel.segmenter.isSegmenting { emit(.sduSent(localCID: localCID)) }
        }
        channels[localCID] = channel
    }

    mutating func receiveCredits(_ localCID: UInt16, _ credits: Int, now: MonotonicInstant) {
        guard let channel = channels[localCID], channel.state == .open else { return }
        let total = channel.sendCredits + credits
        guard total <= 65535 else { return violate(localCID, .creditOverflow(credits: total), now: now) }
        channels[localCID]?.sendCredits = total
        pump(localCID)
        disconnectIfDrained(localCID, now: now)
    }

    mutating func receiveKFrame(_ localCID: UInt16, _ payload: ArraySlice<UInt8>, now: MonotonicInstant) {
        guard var channel = channels[localCID], channel.state == .open else { return }
        guard channel.receiveCredits > 0 else { return violate(localCID, .kFrameWithoutCredit, now: now) }
        channel.receiveCredits -= 1
        let sdu: KFrameReassembler.SDU?
        do {
            sdu = try channel.reassembler.receive(payload)
        } catch {
            channels[localCID] = channel
            return violate(localCID, error, now: now)
        }
        if let sdu { channel.received.append(sdu) }
        channels[localCID] = channel
        if sdu != nil { emit(.sduReceived(localCID: localCID)) }
        returnCredits(localCID)
    }

    /// §10.1/§3.4.3: the receiver of a breach shall disconnect the channel. Held SDUs are dropped.
    mutating func violate(_ localCID: UInt16, _ violation: CreditBasedFlowViolation, now: MonotonicInstant) {
        if var channel = channels[localCID] {
            channel.received = []
            channel.receivedHead = 0
            channel.reassembler = KFrameReassembler(mtu: channel.localMTU, mps: channel.localMPS)
            channels[localCID] = channel
        }
        startDisconnect(localCID, reason: .violation(violation), now: now)
    }
}
