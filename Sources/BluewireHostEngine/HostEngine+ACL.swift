import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireL2CAP

extension HostEngine {
    /// One ACL data packet from the controller: reassembled into an L2CAP PDU (Core Vol 3 Part A
    /// §7.2) and routed by channel. Packets longer than the controller's buffer size (bumble sends
    /// such) are taken as they come: the reassembler checks only the L2CAP length.
    ///
    /// Returns false when the packet was a notification taken by the fast path, which changes
    /// nothing the engine's procedures wait for (so `receive` need not pump them).
    mutating func receiveACL(_ payload: ArraySlice<UInt8>) -> Bool {
        // A whole PDU in one packet, the commonest case, read straight from the bytes; anything else
        // (fragments, malformed headers) through `ACLPacket` and the reassembler's full rules.
        if let pdu = reassembler.wholePDU(inPacket: payload) { return receivePDU(pdu) }
        guard let packet = try? ACLPacket(decoding: payload), let pdu = reassembler.receive(packet).pdu else { return true }
        return receivePDU(pdu)
    }

    /// One L2CAP PDU, routed by channel; the same result as `receiveACL`.
    mutating func receivePDU(_ pdu: L2CAPPDU) -> Bool {
        guard let index = links.index(forKey: pdu.handle) else { return true }
        switch pdu.channelID {
        case .att:
            // Through `values[index]`, mutated in place: `links[handle]?.` would move the whole
            // link through an Optional, whose coroutine frame is heap-allocated on every packet.
            if let notification = links.values[index].bearer.receiveNotification(pdu.payload, now: now) {
                // The commonest PDU, straight to the notification lane (ATTBearer+NotificationFastPath).
                emitNotification(connection: pdu.handle, attribute: notification.handle, value: notification.value, isIndication: false)
                return false
            }
            links.values[index].bearer.receive(pdu.payload, now: now)
            drainBearer(handle: pdu.handle)
        case .leSignaling:
            receiveSignaling(handle: pdu.handle, payload: pdu.payload)
        case .smp:
            // The Security Manager (HostEngine+Security, Core Vol 3 Part H §3.3).
            receiveSMP(handle: pdu.handle, payload: pdu.payload)
        default:
            // Dynamic CIDs: K-frames of the credit based channels (HostEngine+Channels).
            receiveChannelFrame(handle: pdu.handle, channelID: pdu.channelID, payload: pdu.payload)
        }
        return true
    }

    /// Fragments an L2CAP payload to the controller's buffer size and queues it behind the link's
    /// earlier fragments; credits decide when each goes (§4.1.1). The lane is the channel's kind's
    /// unless `lane` says otherwise.
    mutating func sendL2CAP(handle: UInt16, channel: L2CAPChannelID, payload: [UInt8], lane: ACLCreditManager.Lane? = nil) {
        let lane: ACLCreditManager.Lane = lane ?? (channel.isDynamic ? .channels : .fixed)
        fragmenter.forEachWirePacket(handle: handle, channelID: channel, payload: payload[...]) {
            aclCredits.enqueue(handle: handle, $0, lane: lane)
        }
        pumpACL()
    }

    /// Queues an already encoded L2CAP frame on the fixed channels' lane (the notification and
    /// stream hot paths, which build the frame themselves).
    mutating func sendL2CAPFrame(handle: UInt16, frame: ArraySlice<UInt8>) {
        fragmenter.forEachWirePacket(handle: handle, frame: frame) { aclCredits.enqueue(handle: handle, $0) }
        pumpACL()
    }

    /// ACL packets waiting for controller buffers on `handle` (both lanes): a diagnostic.
    public func aclQueuedCount(handle: UInt16) -> Int { aclCredits.queuedCount(handle: handle) }

    mutating func pumpACL() {
        while let packet = aclCredits.nextPacketToSend() {
            write(HCIPacket(type: .acl, payload: packet.bytes))
        }
    }

    /// Acts on what the link's ATT bearer produced.
    mutating func drainBearer(handle: UInt16) {
        while let index = links.index(forKey: handle), let output = links.values[index].bearer.nextOutput() {
            switch consume output {
            case .send(var pdu):
                // Encoded behind `L2CAPFragmenter.headroom` octets (EngineLink's bearer): the headers
                // go in front in place, and the PDU's own buffer is the packet when it fits one.
                fragmenter.forEachWirePacket(handle: handle, channelID: .att, headroomed: &pdu) {
                    aclCredits.enqueue(handle: handle, $0)
                }
                pumpACL()
            case .event(let event):
                bearerEvent(event, handle: handle)
            }
        }
    }

    mutating func bearerEvent(_ event: ATTBearerEvent, handle: UInt16) {
        switch event {
        case .response(let id, let pdu):
            clientResponse(id, .success(pdu), handle: handle)
        case .requestFailed(let id, let error):
            clientResponse(id, .failure(error), handle: handle)
        case .notification(let attribute, let value):
            emitNotification(connection: handle, attribute: attribute, value: value, isIndication: false)
        case .multipleNotification(let notification):
            for entry in notification.entries {
                emitNotification(connection: handle, attribute: entry.handle, value: entry.value, isIndication: false)
            }
        case .indication(let attribute, let value):
            emitNotification(connection: handle, attribute: attribute, value: value, isIndication: true)
        case .request(let pdu):
            serverRequest(pdu, handle: handle)
        case .command(let pdu):
            if case .signedWriteCommand(let attribute, let value, let signature) = pdu {
                // Verified with the peer's CSRK and SignCounter first (HostEngine+SignedWrites).
                receiveSignedWrite(handle, attribute: attribute, value: value, signature: signature)
            } else {
                _ = server.respond(to: pdu, from: handle)
            }
            publishServerEvents()
        case .indicationConfirmed(let id):
            serverIndicationConfirmed(id, handle: handle)
        case .indicationFailed(let id, let error):
            indicationFinished(id, .failure(.att(error)), handle: handle)
        case .mtuChanged(let mtu):
            server.setMTU(mtu, for: handle)
            publishServerEvents()
            emit(.mtuChanged(connection: handle, mtu: mtu))
        case .unexpectedPDU, .malformedPDU:
            break
        case .closed(let reason):
            if case .transactionTimeout = reason {
                // Failure: the bearer is unusable (§3.3.3). Accepted unless the peer is already in Error.
                if let peer = links[handle]?.machinePeer, state(of: peer) != .error {
                    fireExpected(.failure, peer: peer, cause: .att(.transactionTimeout))
                }
                // After a transaction timeout no more ATT on this bearer (Core Vol 3 Part F §3.3.3): drop the link.
                enqueue(nil, .bestEffort, [.disconnect(Disconnect(connectionHandle: handle))], optional: true)
            }
        }
    }
}
