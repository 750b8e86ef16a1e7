import BluewireCore
import BluewireHCI

/// Summaries of HCI ACL data packets and the L2CAP PDUs they carry (Core Vol 4 Part E §5.4.2,
/// Vol 3 Part A §3).
enum ACLDescription {
    static func describe(
        _ packet: ArraySlice<UInt8>, direction: PacketDirection, recordIndex: Int,
        reassembler: inout CaptureL2CAPReassembler, channels: inout CreditBasedChannelTracker,
        into d: inout PacketDescription
    ) {
        let header: ACLPacket
        do {
            header = try ACLPacket(decoding: packet)
        } catch {
            // A length mismatch still has a usable header; a truncated one does not.
            if packet.count >= 4 {
                let s = packet.startIndex
                let handle = UInt16(packet[s]) | UInt16(packet[s &+ 1] & 0x0F) << 8
                d.addHex("acl_handle", handle, shown: false)
                d.say("handle 0x" + hex(handle, width: 4))
            }
            d.fail(error)
            return
        }
        // Shown btmon-style; the JSON key differs from the ATT attribute handle's.
        d.addHex("acl_handle", header.handle, shown: false)
        d.add("flags", header.packetBoundary.rawValue, shown: false)
        d.add("dlen", header.data.count, shown: false)
        d.say("handle 0x" + hex(header.handle, width: 4) + " flags 0x" + hex(header.packetBoundary.rawValue, width: 2)
            + " dlen " + String(header.data.count))
        switch reassembler.push(packet, direction: direction, recordIndex: recordIndex) {
        case .dropped:
            d.say(header.packetBoundary.isStart ? "(L2CAP length does not fit)" : "(continuation without start)")
        case .started(let needed):
            d.say("(start of a fragmented L2CAP PDU of \(needed) bytes)")
        case .continued(let received, let needed):
            d.say("(continuation \(received)/\(needed) bytes)")
        case .complete(let pdu):
            if pdu.isReassembled {
                d.add("reassembled_from", pdu.firstRecordIndex)
            }
            describeL2CAP(pdu, handle: header.handle, outbound: direction == .hostToController, channels: &channels, into: &d)
        }
    }

    static func describeL2CAP(
        _ pdu: CaptureL2CAPReassembler.PDU, handle: UInt16, outbound: Bool,
        channels: inout CreditBasedChannelTracker, into d: inout PacketDescription
    ) {
        guard let channel = pdu.channelID else {
            d.fail(DecodeError(.truncated(needed: 4, available: pdu.bytes.count), layer: "l2cap",
                               field: "Basic L2CAP header", offset: 0))
            return
        }
        d.addHex("cid", channel)
        let payload = pdu.payload
        let s = pdu.bytes.startIndex
        let declared = Int(UInt16(pdu.bytes[s]) | UInt16(pdu.bytes[s &+ 1]) << 8)
        if declared != payload.count {
            d.fail(DecodeError(.lengthMismatch(declared: declared, actual: payload.count), layer: "l2cap",
                               field: "PDU Length", offset: 0))
        }
        switch channel {
        case 0x0004:
            ATTDescription.describe(payload, into: &d)
        case 0x0005, 0x0001:
            L2CAPSignalingDescription.describe(payload, leChannel: channel == 0x0005, into: &d)
            if channel == 0x0005 {
                channels.signaling(payload, handle: handle, outbound: outbound, record: d.index)
            }
        case 0x0006, 0x0007:
            SMPDescription.describe(payload, into: &d)
        case 0x0040...0x007F:
            guard let frame = channels.kFrame(payload, handle: handle, cid: channel, outbound: outbound) else {
                fallthrough
            }
            describeKFrame(frame, payload, into: &d)
        default:
            d.say("L2CAP data")
            d.add("data", hexString(payload.prefix(32)) + (payload.count > 32 ? "..." : ""))
        }
    }

    /// A K-frame of a credit based channel (Core Vol 3 Part A §3.4.3): the SDU length when it starts
    /// an SDU; an Enhanced ATT bearer's SDU (SPSM 0x0027) is an ATT PDU, described as on CID 0x0004.
    static func describeKFrame(_ frame: CreditBasedChannelTracker.KFrame, _ payload: ArraySlice<UInt8>, into d: inout PacketDescription) {
        let eatt = frame.channel.psm == 0x0027
        d.say((eatt ? "EATT K-frame" : "LE credit based K-frame") + " (SPSM 0x" + hex(frame.channel.psm, width: 4) + ")")
        d.addHex("spsm", frame.channel.psm, shown: false)
        if let length = frame.sduLength {
            d.add("sdu_length", length)
            let information = payload.dropFirst(2)
            if eatt, frame.completesSDU, information.count == length {
                ATTDescription.describe(information, into: &d)
                return
            }
            d.say(frame.completesSDU ? "SDU" : "SDU start")
            d.add("data", hexString(information.prefix(32)) + (information.count > 32 ? "..." : ""))
        } else {
            d.say(frame.completesSDU ? "SDU end" : "SDU continuation")
            d.add("data", hexString(payload.prefix(32)) + (payload.count > 32 ? "..." : ""))
        }
    }
}
