import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireL2CAP

// Left out of builds with BLUEWIRE_NO_CHANNELS (the firmware images); HostEngine+NoChannels stands in.
#if !BLUEWIRE_NO_CHANNELS

/// Enhanced ATT, server side (Core Vol 3 Part G §5.3.2, Part F §3.2.11): every Enhanced Credit
/// Based channel on SPSM 0x0027 is one more ATT bearer of the link, answered by the same GATT
/// server as the fixed channel 0x0004. Each bearer has its own transaction (one request at a time
/// per bearer, §3.3.2), so a client may run several at once; its ATT_MTU is the smaller of the two
/// channel MTUs (Part G §5.3.1). Register SPSM 0x0027 with `.registerServer` to accept them.
///
/// The GATT server builds each response for the bearer's ATT_MTU (at most the configured
/// `preferredMTU`); a response still too long is answered with Unlikely Error.
/// Notifications and indications from the local server still go on the fixed channel. Enhanced
/// channels this engine opens to a peer's 0x0027 are bearers too: the GATT client runs on them
/// (HostEngine+EATTClient).
extension HostEngine {
    mutating func openEATTBearer(_ channel: HostChannel) {
        guard let index = links.index(forKey: channel.connection) else { return }
        var bearer = ATTBearer(preferredMTU: UInt16(clamping: channel.mtu))
        bearer.setEnhancedBearerMTU(min(channel.mtu, channel.peerMTU))
        links.values[index].channels.eattBearers[channel.cid] = bearer
    }

    /// One SDU of an EATT channel: one ATT PDU (Part F §3.2.11: no PDU spans SDUs).
    mutating func receiveEATT(_ sdu: [UInt8], cid: UInt16, handle: UInt16) {
        guard let index = links.index(forKey: handle) else { return }
        links.values[index].channels.eattBearers[cid]?.receive(sdu, now: now)
        drainEATT(cid: cid, handle: handle)
    }

    /// Sends what the EATT bearer produced as SDUs of its channel and answers the requests it got.
    mutating func drainEATT(cid: UInt16, handle: UInt16) {
        while let index = links.index(forKey: handle),
              let output = links.values[index].channels.eattBearers[cid]?.nextOutput() {
            switch output {
            case .send(let bytes):
                sendSDU(nil, handle, cid, bytes)
            case .event(.request(let pdu)):
                answerEATT(pdu, cid: cid, handle: handle)
            case .event(.command(let pdu)):
                _ = server.respond(to: pdu, from: handle)
                publishServerEvents()
            case .event(let event):
                eattBearerEvent(event, cid: cid, handle: handle)
            }
        }
    }

    /// The client side of an EATT bearer: responses, notifications and indications (confirmed by
    /// the bearer), and the transaction timeout, after which the channel must go (Part F §3.3.3).
    mutating func eattBearerEvent(_ event: ATTBearerEvent, cid: UInt16, handle: UInt16) {
        switch event {
        case .response(let id, let pdu):
            eattClientResponse(id, .success(pdu), handle: handle, cid: cid)
        case .requestFailed(let id, let error):
            eattClientResponse(id, .failure(error), handle: handle, cid: cid)
        case .notification(let attribute, let value):
            emitNotification(connection: handle, attribute: attribute, value: value, isIndication: false)
        case .multipleNotification(let notification):
            for entry in notification.entries {
                emitNotification(connection: handle, attribute: entry.handle, value: entry.value, isIndication: false)
            }
        case .indication(let attribute, let value):
            emitNotification(connection: handle, attribute: attribute, value: value, isIndication: true)
        case .closed(.transactionTimeout):
            guard let index = links.index(forKey: handle) else { return }
            try? links.values[index].channels.manager.disconnect(cid, now: now)
            drainChannels(handle: handle)
        default:
            break
        }
    }

    /// Fires the ATT transaction timeouts of EATT bearers.
    mutating func advanceEATTTimers() {
        // As for the channels: nothing sorted or allocated unless a bearer's ATT timer is due.
        let now = self.now
        guard links.values.contains(where: { link in
            link.channels.eattBearers.values.contains { bearer in bearer.deadline.map { $0 <= now } ?? false }
        }) else { return }
        for handle in links.sortedKeys {
            guard let cids = links[handle]?.channels.eattBearers.keys.sorted() else { continue }
            for cid in cids {
                guard let index = links.index(forKey: handle), let deadline = links.values[index].channels.eattBearers[cid]?.deadline,
                      deadline <= now
                else { continue }
                links.values[index].channels.eattBearers[cid]?.advanceTime(to: now)
                drainEATT(cid: cid, handle: handle)
            }
        }
    }

    mutating func answerEATT(_ pdu: ATTPDU, cid: UInt16, handle: UInt16) {
        guard let mtu = links[handle]?.channels.eattBearers[cid]?.mtu else { return }
        let response: ATTPDU
        if pdu.encode().count > mtu {
            response = .errorResponse(requestOpcode: pdu.opcode, handle: 0, error: .invalidPDU)
        } else {
            response = server.respond(to: pdu, from: handle, bearerMTU: mtu)
                ?? .errorResponse(requestOpcode: pdu.opcode, handle: 0, error: .requestNotSupported)
        }
        guard let index = links.index(forKey: handle) else { return }
        if (try? links.values[index].channels.eattBearers[cid]?.respond(response)) == nil {
            try? links.values[index].channels.eattBearers[cid]?.respond(
                .errorResponse(requestOpcode: pdu.opcode, handle: 0, error: .unlikelyError))
        }
        publishServerEvents()
        observeServerResponse(to: pdu, response: response, on: handle)
        drainEATT(cid: cid, handle: handle)
    }
}

#endif  // !BLUEWIRE_NO_CHANNELS
