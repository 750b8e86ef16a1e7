import BluewireCore
import BluewireHCI

/// Summaries of HCI ACL data packets and the L2CAP PDUs they carry (Core Vol 4 Part E §5.4.2,
/// Vol 3 Part A §3).
enum ACLDescription {
    static func describe(
        _ packet: ArraySlice<UInt8>, direction: PacketDirection, recordIndex: Int,
        reassembler: inout CaptureL2CAPReassembler, into d: inout PacketDescription
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
            describeL2CAP(pdu, into: &d)
        }
    }

    static func describeL2CAP(_ pdu: CaptureL2CAPReassembler.PDU, into d: inout PacketDescription) {
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
            signaling(payload, leChannel: channel == 0x0005, into: &d)
        case 0x0006, 0x0007:
            if let code = payload.first {
                d.say("SMP " + smpName(code))
                d.addHex("smp_code", code, digits: 2, shown: false)
            } else {
                d.say("SMP (empty)")
            }
        default:
            d.say("L2CAP data")
            d.add("data", hexString(payload.prefix(32)) + (payload.count > 32 ? "..." : ""))
        }
    }

    static func signaling(_ payload: ArraySlice<UInt8>, leChannel: Bool, into d: inout PacketDescription) {
        let channel = leChannel ? "LE Signaling" : "L2CAP Signaling"
        guard payload.count >= 4 else {
            d.say(channel)
            d.fail(DecodeError(.truncated(needed: 4, available: payload.count), layer: "l2cap",
                               field: "Signaling command header", offset: 4))
            return
        }
        let s = payload.startIndex
        let code = payload[s]
        d.say(channel + " " + signalingName(code))
        d.add("identifier", payload[s &+ 1])
        d.addHex("signaling_code", code, digits: 2, shown: false)
    }

    /// Signaling command names (Core Vol 3 Part A §4).
    static func signalingName(_ code: UInt8) -> String {
        switch code {
        case 0x01: return "Command Reject"
        case 0x02: return "Connection Request"
        case 0x03: return "Connection Response"
        case 0x04: return "Configure Request"
        case 0x05: return "Configure Response"
        case 0x06: return "Disconnection Request"
        case 0x07: return "Disconnection Response"
        case 0x08: return "Echo Request"
        case 0x09: return "Echo Response"
        case 0x0A: return "Information Request"
        case 0x0B: return "Information Response"
        case 0x12: return "Connection Parameter Update Request"
        case 0x13: return "Connection Parameter Update Response"
        case 0x14: return "LE Credit Based Connection Request"
        case 0x15: return "LE Credit Based Connection Response"
        case 0x16: return "Flow Control Credit"
        case 0x17: return "Credit Based Connection Request"
        case 0x18: return "Credit Based Connection Response"
        case 0x19: return "Credit Based Reconfigure Request"
        case 0x1A: return "Credit Based Reconfigure Response"
        default: return "Unknown (0x" + hex(code, width: 2) + ")"
        }
    }

    /// Security Manager command names (Core Vol 3 Part H §3.3).
    static func smpName(_ code: UInt8) -> String {
        switch code {
        case 0x01: return "Pairing Request"
        case 0x02: return "Pairing Response"
        case 0x03: return "Pairing Confirm"
        case 0x04: return "Pairing Random"
        case 0x05: return "Pairing Failed"
        case 0x06: return "Encryption Information"
        case 0x07: return "Central Identification"
        case 0x08: return "Identity Information"
        case 0x09: return "Identity Address Information"
        case 0x0A: return "Signing Information"
        case 0x0B: return "Security Request"
        case 0x0C: return "Pairing Public Key"
        case 0x0D: return "Pairing DHKey Check"
        case 0x0E: return "Pairing Keypress Notification"
        default: return "Unknown (0x" + hex(code, width: 2) + ")"
        }
    }
}
