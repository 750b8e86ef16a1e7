import BluewireATT
import BluewireCore
import BluewireL2CAP

/// Enhanced ATT, server side (Core Vol 3 Part G §5.3.2, Part F §3.2.11): every Enhanced Credit
/// Based channel on SPSM 0x0027 is one more ATT bearer of the link, answered by the same GATT
/// server as the fixed channel 0x0004. Each bearer has its own transaction (one request at a time
/// per bearer, §3.3.2), so a client may run several at once; its ATT_MTU is the smaller of the two
/// channel MTUs (Part G §5.3.1). Register SPSM 0x0027 with `.registerServer` to accept them.
///
/// The GATT server builds each response for the bearer's ATT_MTU (at most the configured
/// `preferredMTU`); a response still too long is answered with Unlikely Error.
/// Notifications and indications still go on the fixed channel. Enhanced channels this engine
/// opens to a peer's 0x0027 stay plain channels: the GATT client does not run on them yet, the
/// application exchanges ATT PDUs on them as SDUs.
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
            case .event:
                break
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
        drainEATT(cid: cid, handle: handle)
    }
}
