import BluewireCore

extension CreditBasedChannelManager {
    /// Takes one B-frame received on the link. Returns false when the frame is for neither CID 0x0005
    /// nor one of our channels (ATT, SMP and unknown CIDs are the caller's).
    @discardableResult
    public mutating func receive(channelID: L2CAPChannelID, payload: ArraySlice<UInt8>, now: MonotonicInstant) -> Bool {
        if channelID == .leSignaling {
            receiveSignaling(payload, now: now)
            return true
        }
        guard channels[channelID.rawValue] != nil else { return false }
        receiveKFrame(channelID.rawValue, payload, now: now)
        return true
    }

    mutating func receiveSignaling(_ payload: ArraySlice<UInt8>, now: MonotonicInstant) {
        guard let command = try? LESignalingCommand(decoding: payload), command.identifier != 0 else {
            return delegate(payload)
        }
        let id = command.identifier
        switch command.body {
        case .leCreditBasedConnectionRequest(let spsm, let source, let mtu, let mps, let credits):
            acceptLE(id, SPSM(spsm), source: source, mtu: Int(mtu), mps: Int(mps), credits: Int(credits))
        case .creditBasedConnectionRequest(let spsm, let mtu, let mps, let credits, let sources):
            acceptEnhanced(id, SPSM(spsm), sources: Array(sources), mtu: Int(mtu), mps: Int(mps), credits: Int(credits))
        case .creditBasedReconfigureRequest(let mtu, let mps, let destinations):
            acceptReconfigure(id, Array(destinations), mtu: Int(mtu), mps: Int(mps))
        case .disconnectionRequest(let destination, let source):
            guard let channel = channels[destination], channel.state != .connecting else { return delegate(payload) }
            // Core Vol 3 Part A §4.6: a known DCID with an SCID that is not its channel's remote CID is
            // discarded silently; a Command Reject would call the DCID invalid, which it is not.
            guard channel.remoteCID == source else {
                emit(.signaling(.ignored(.disconnectionRequest)))
                return
            }
            sendCommand(LESignalingCommand(identifier: id, body: .disconnectionResponse(destinationCID: destination, sourceCID: source)))
            channels[destination] = nil
            // Both sides disconnecting at once: our own request is moot, and its timeout must not
            // close a later channel that reuses the CID.
            for (pendingID, entry) in pending where entry.request == .disconnect(localCID: destination) {
                pending[pendingID] = nil
            }
            emit(.disconnected(localCID: destination, reason: channel.closeReason ?? .remote))
        case .flowControlCreditIndication(let cid, let credits):
            guard let local = localCID(forRemote: cid) else { return delegate(payload) }
            receiveCredits(local, Int(credits), now: now)
        case .leCreditBasedConnectionResponse, .creditBasedConnectionResponse, .creditBasedReconfigureResponse,
             .disconnectionResponse, .commandReject:
            guard let entry = pending[id] else { return delegate(payload) }
            pending[id] = nil
            receiveResponse(command.body, to: entry.request, identifier: id, now: now)
        default:
            delegate(payload)
        }
    }

    /// Everything that is not about credit based channels: Connection Parameter Update, Command
    /// Reject for unknown and malformed requests, diagnostics for unmatched responses.
    mutating func delegate(_ payload: ArraySlice<UInt8>) {
        let output = signaling.receive(payload)
        if let reply = output.reply { sendCommand(reply) }
        if let event = output.event { emit(.signaling(event)) }
    }

    /// The refusal, if any, that the registry and the link's security give a request for `psm`.
    func admission(_ psm: SPSM) -> (service: Service?, shortfall: L2CAPSecurityShortfall?) {
        guard psm.isValid, let service = services[psm.rawValue] else { return (nil, nil) }
        return (service, service.security.shortfall(of: linkSecurity))
    }

    mutating func acceptLE(_ id: UInt8, _ psm: SPSM, source: UInt16, mtu: Int, mps: Int, credits: Int) {
        func refuse(_ result: LECreditBasedConnectionResult) {
            sendCommand(LESignalingCommand(identifier: id, body: .leCreditBasedConnectionResponse(
                destinationCID: 0, mtu: 0, mps: 0, initialCredits: 0, result: result)))
            emit(.incomingConnectionRefused(psm: psm, result: CreditBasedConnectionResult(rawValue: result.rawValue)))
        }
        let (service, shortfall) = admission(psm)
        guard let service else { return refuse(.spsmNotSupported) }
        if let shortfall { return refuse(shortfall.leResult) }
        guard (0x0040...0x007F).contains(source) else { return refuse(.invalidSourceCID) }
        guard localCID(forRemote: source) == nil else { return refuse(.sourceCIDAlreadyAllocated) }
        guard mtu >= 23, (23...65533).contains(mps) else { return refuse(.unacceptableParameters) }
        guard service.room(open: acceptedChannelCount(psm: psm)) > 0, let cid = allocateLocalCID() else {
            return refuse(.noResourcesAvailable)
        }
        let local = service.parameters.normalized(for: .leCreditBased)
        var channel = CreditBasedChannel(localCID: cid, psm: psm, kind: .leCreditBased, isInitiator: false, local: local)
        channel.openWith(remoteCID: source, mtu: mtu, mps: mps, credits: credits)
        channels[cid] = channel
        sendCommand(LESignalingCommand(identifier: id, body: .leCreditBasedConnectionResponse(
            destinationCID: cid, mtu: UInt16(local.mtu), mps: UInt16(local.mps),
            initialCredits: UInt16(local.initialCredits), result: .connectionSuccessful)))
        emit(.connected(localCID: cid, psm: psm, initiatedLocally: false))
    }

    mutating func acceptEnhanced(_ id: UInt8, _ psm: SPSM, sources: [UInt16], mtu: Int, mps: Int, credits: Int) {
        func refuseAll(_ result: CreditBasedConnectionResult) {
            sendCommand(LESignalingCommand(identifier: id, body: .creditBasedConnectionResponse(
                mtu: 0, mps: 0, initialCredits: 0, result: result,
                destinationCIDs: L2CAPCIDList(Array(repeating: UInt16(0), count: sources.count)))))
            emit(.incomingConnectionRefused(psm: psm, result: result))
        }
        guard (1...5).contains(sources.count) else { return refuseAll(.allRefusedInvalidParameters) }
        let (service, shortfall) = admission(psm)
        guard let service else { return refuseAll(.allRefusedSPSMNotSupported) }
        if let shortfall { return refuseAll(shortfall.enhancedResult) }
        guard mtu >= 64, (64...65533).contains(mps) else { return refuseAll(.allRefusedUnacceptableParameters) }
        let local = service.parameters.normalized(for: .enhancedCreditBased)
        var result = CreditBasedConnectionResult.allConnectionsSuccessful
        var destinations: [UInt16] = []
        var opened: [UInt16] = []
        var room = service.room(open: acceptedChannelCount(psm: psm))
        for (index, source) in sources.enumerated() {
            var refusal: CreditBasedConnectionResult?
            if !(0x0040...0x007F).contains(source) {
                refusal = .someRefusedInvalidSourceCID
            } else if localCID(forRemote: source) != nil || sources[..<index].contains(source) {
                refusal = .someRefusedSourceCIDAlreadyAllocated
            } else if room == 0 {
                // Beyond what the service takes: refused, as for a lack of CIDs (§4.26).
                refusal = .someRefusedInsufficientResources
            }
            guard refusal == nil, let cid = allocateLocalCID() else {
                if result == .allConnectionsSuccessful { result = refusal ?? .someRefusedInsufficientResources }
                destinations.append(0)
                continue
            }
            var channel = CreditBasedChannel(localCID: cid, psm: psm, kind: .enhancedCreditBased, isInitiator: false, local: local)
            channel.openWith(remoteCID: source, mtu: mtu, mps: mps, credits: credits)
            channels[cid] = channel
            destinations.append(cid)
            opened.append(cid)
            room -= 1
        }
        sendCommand(LESignalingCommand(identifier: id, body: .creditBasedConnectionResponse(
            mtu: UInt16(local.mtu), mps: UInt16(local.mps), initialCredits: UInt16(local.initialCredits),
            result: result, destinationCIDs: L2CAPCIDList(destinations))))
        for cid in opened { emit(.connected(localCID: cid, psm: psm, initiatedLocally: false)) }
    }

    /// The peer raises its receive MTU/MPS on some enhanced channels (§4.27): our sending side. The
    /// list names the requester's own CIDs (the destinations of our K-frames), as BlueZ and Zephyr
    /// read it.
    mutating func acceptReconfigure(_ id: UInt8, _ remoteCIDs: [UInt16], mtu: Int, mps: Int) {
        func answer(_ result: CreditBasedReconfigureResult) {
            sendCommand(LESignalingCommand(identifier: id, body: .creditBasedReconfigureResponse(result: result)))
        }
        guard (1...5).contains(remoteCIDs.count) else { return answer(.unacceptableParameters) }
        var locals: [UInt16] = []
        for remote in remoteCIDs {
            guard let cid = localCID(forRemote: remote), let channel = channels[cid], channel.state == .open,
                  channel.kind == .enhancedCreditBased
            else { return answer(.destinationCIDsInvalid) }
            if mtu < channel.remoteMTU { return answer(.reductionInMTUNotAllowed) }
            if mps < channel.remoteMPS && remoteCIDs.count > 1 { return answer(.reductionInMPSNotAllowed) }
            locals.append(cid)
        }
        guard mtu >= 64, (64...65533).contains(mps) else { return answer(.unacceptableParameters) }
        for cid in locals {
            channels[cid]?.remoteMTU = mtu
            channels[cid]?.segmenter.mps = mps
        }
        answer(.reconfigurationSuccessful)
        emit(.reconfigured(localCIDs: locals, mtu: mtu, mps: mps, byPeer: true))
    }
}
