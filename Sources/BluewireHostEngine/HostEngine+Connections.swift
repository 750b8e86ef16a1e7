import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireL2CAP

extension HostEngine {
    // MARK: both roles: link up

    /// LE (Enhanced) Connection Complete (§7.7.65.1 / §7.7.65.10).
    mutating func connectionComplete(_ event: LEConnectionComplete) {
        let role: HostLinkRole = event.isCentral ? .central : .peripheral
        guard event.status.isSuccess else {
            // A failed attempt (status 0x02 after a cancel, or a real failure) ends the attempt, once
            // the controller accepted ours: before that it is an older attempt's, a killed program's
            // that `clearControllerLeftovers` cancelled (§7.8.13; bumble reports it after the Cancel's
            // Command Complete, while our LE Create Connection may already be on its way).
            // One that names another peer is an older attempt's that ended late (after the engine
            // stopped waiting for it, `cancelledAttemptEndOverdue`), not this one's.
            if role == .central || pendingConnection.isSome, let pending = pendingConnection, pending.accepted,
               event.peerAddress.value == 0 || event.peerAddress.value == pending.peer.value {
                pendingConnection = nil
                if pending.requestID != nil {
                    // Accepted: the attempt is in Connecting (see cancelConnect). One already cancelled
                    // or timed out has left it; the late failure is not the peer's any more.
                    fireExpected(.failure, peer: pending.requested, cause: .connectionFailed(event.status))
                }
                complete(pending.requestID, .failure(.connectionFailed(event.status)))
            }
            return
        }
        let handle = event.connectionHandle
        // A controller that resolved the peer's private address with its resolving list reports the
        // identity (type 0x02/0x03) and, in the enhanced event, the private address used on air, which
        // is the link's peer address (SMP's f5/f6/c1 take it, Core Vol 3 Part H §2.2).
        let controllerIdentity = controllerResolvedIdentity(event.peerAddress)
        var peer = event.peerAddress
        if let controllerIdentity {
            peer = controllerIdentity
            if let onAir = event.peerResolvablePrivateAddress, onAir.value != 0 { peer = onAir }
        }
        var link = EngineLink(
            handle: handle, role: role, peer: peer, interval: event.connectionInterval,
            preferredMTU: configuration.preferredMTU)
        link.identity = controllerIdentity ?? resolveIdentity(peer)
        link.localAddress = role == .peripheral
            ? advertising.commands?.ownAddress ?? configuration.randomAddress
            : advertising.controllerRandomAddress ?? configuration.randomAddress
        links[handle] = link
        installChannelServices(handle: handle)
        server.connect(handle)
        let connection = link.connection
        emit(.connected(connection))
        if role == .central {
            let pending = pendingConnection
            pendingConnection = nil
            if let pending, let id = pending.requestID {
                links[handle]?.machinePeer = pending.requested
                // Accepted: the attempt is in Connecting (see cancelConnect).
                fireExpected(.connected, peer: pending.requested)
                complete(id, .success(.connected(connection)))
                if controller?.supportsDataLengthExtension == true {
                    // Longer link-layer packets (§7.8.33); bumble answers with a bare status 0x01.
                    enqueue(nil, .bestEffort, [.leSetDataLength(LESetDataLength(connectionHandle: handle))], optional: true)
                }
            } else {
                // A connection we stopped waiting for (cancelled or timed out, the controller made it anyway).
                enqueue(nil, .bestEffort, [.disconnect(Disconnect(connectionHandle: handle))], optional: true)
            }
        } else {
            advertisingConnectionCreated()
            if controller?.supportsDataLengthExtension == true {
                // The peripheral asks for longer link-layer packets too (§7.8.33): a controller that
                // starts at 27 octets would otherwise send every notification in 27-octet PDUs.
                enqueue(nil, .bestEffort, [.leSetDataLength(LESetDataLength(connectionHandle: handle))], optional: true)
            }
        }
    }

    // MARK: disconnecting

    mutating func disconnect(_ id: HostRequestID, _ handle: UInt16, _ reason: HCIStatus) {
        guard links.index(forKey: handle) != nil else { return complete(id, .failure(.unknownConnection(handle))) }
        links[handle]?.disconnectRequests.append(id)
        enqueue(id, .disconnect(handle), [.disconnect(Disconnect(connectionHandle: handle, reason: reason))])
    }

    /// Disconnection Complete (§7.7.5): every operation on the link fails with the reason.
    mutating func linkDisconnected(handle: UInt16, reason: HCIStatus) {
        guard var link = links.removeValue(forKey: handle) else { return }
        // Connected.* → Initial. A peer already in Error (ATT transaction timeout, Hardware Error)
        // stays there: Error is left only by Reset, and this disconnection is what the failure caused.
        if let peer = link.machinePeer, state(of: peer).isConnected { fireExpected(.disconnect, peer: peer) }
        link.bearer.disconnected()
        _ = link.bearer.takeOutputs()
        for operation in link.clientOperations { complete(operation.id, .failure(.disconnected(reason))) }
        for (_, id) in link.indicationRequests { complete(id, .failure(.disconnected(reason))) }
        securityDisconnected(link, reason: reason)
        for id in link.disconnectRequests { complete(id, .success(.disconnected(reason))) }
        linkParametersDisconnected(link, reason: reason)
        attStreamsLinkDown(handle, reason: reason)
        aclCredits.disconnected(handle: handle)
        reassembler.disconnected(handle: handle)
        server.disconnect(handle)
        channelsLinkDown(&link, reason: reason)
        emit(.disconnected(handle: handle, reason: reason))
        pumpACL()
        if link.role == .peripheral { resumeAdvertising() }
    }
}
