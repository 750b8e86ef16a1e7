import BluewireCore

/// L2CAP signaling commands on the BR/EDR (CID 0x0001) and LE (CID 0x0005) signaling channels
/// (Core Vol 3 Part A §4): each command's name and every field by name. A BR/EDR C-frame may carry
/// several commands (§4); each is described in turn.
enum L2CAPSignalingDescription {
    struct Layout: Sendable {
        let name: String
        let fields: [Parameter]
    }

    static let cid: ParameterKind = .hex16

    /// §4.1–§4.26, indexed by code.
    static let layouts: [UInt8: Layout] = [
        0x01: Layout(name: "Command Reject", fields: [.u16("reason"), .rest("data")]),
        0x02: Layout(name: "Connection Request", fields: [.x16("psm"), .x16("source_cid")]),
        0x03: Layout(name: "Connection Response", fields: [.x16("destination_cid"), .x16("source_cid"),
                                                           .u16("result"), .u16("status")]),
        0x04: Layout(name: "Configuration Request", fields: [.x16("destination_cid"), .x16("flags"), .rest("options")]),
        0x05: Layout(name: "Configuration Response", fields: [.x16("source_cid"), .x16("flags"), .u16("result"),
                                                              .rest("options")]),
        0x06: Layout(name: "Disconnection Request", fields: [.x16("destination_cid"), .x16("source_cid")]),
        0x07: Layout(name: "Disconnection Response", fields: [.x16("destination_cid"), .x16("source_cid")]),
        0x08: Layout(name: "Echo Request", fields: [.rest("data")]),
        0x09: Layout(name: "Echo Response", fields: [.rest("data")]),
        0x0A: Layout(name: "Information Request", fields: [.u16("info_type")]),
        0x0B: Layout(name: "Information Response", fields: [.u16("info_type"), .u16("result"), .rest("data")]),
        0x0C: Layout(name: "Create Channel Request", fields: [.x16("psm"), .x16("source_cid"), .u8("controller_id")]),
        0x0D: Layout(name: "Create Channel Response", fields: [.x16("destination_cid"), .x16("source_cid"),
                                                               .u16("result"), .u16("status")]),
        0x0E: Layout(name: "Move Channel Request", fields: [.x16("initiator_cid"), .u8("dest_controller_id")]),
        0x0F: Layout(name: "Move Channel Response", fields: [.x16("initiator_cid"), .u16("result")]),
        0x10: Layout(name: "Move Channel Confirmation Request", fields: [.x16("initiator_cid"), .u16("result")]),
        0x11: Layout(name: "Move Channel Confirmation Response", fields: [.x16("initiator_cid")]),
        0x12: Layout(name: "Connection Parameter Update Request", fields: [.u16("interval_min"), .u16("interval_max"),
                                                                           .u16("latency"), .u16("timeout")]),
        0x13: Layout(name: "Connection Parameter Update Response", fields: [.u16("result")]),
        0x14: Layout(name: "LE Credit Based Connection Request", fields: [.x16("spsm"), .x16("source_cid"),
                     .u16("mtu"), .u16("mps"), .u16("initial_credits")]),
        0x15: Layout(name: "LE Credit Based Connection Response", fields: [.x16("destination_cid"), .u16("mtu"),
                     .u16("mps"), .u16("initial_credits"), .u16("result")]),
        0x16: Layout(name: "Flow Control Credit Ind", fields: [.x16("cid"), .u16("credits")]),
        0x17: Layout(name: "Credit Based Connection Request", fields: [.x16("spsm"), .u16("mtu"), .u16("mps"),
                     .u16("initial_credits"), Parameter("source_cid", .repeated([.x16("cid")]))]),
        0x18: Layout(name: "Credit Based Connection Response", fields: [.u16("mtu"), .u16("mps"),
                     .u16("initial_credits"), .u16("result"), Parameter("destination_cid", .repeated([.x16("cid")]))]),
        0x19: Layout(name: "Credit Based Reconfigure Request", fields: [.u16("mtu"), .u16("mps"),
                     Parameter("destination_cid", .repeated([.x16("cid")]))]),
        0x1A: Layout(name: "Credit Based Reconfigure Response", fields: [.u16("result")]),
    ]

    static func name(_ code: UInt8) -> String {
        layouts[code]?.name ?? "Unknown (0x" + hex(code, width: 2) + ")"
    }

    static func describe(_ payload: ArraySlice<UInt8>, leChannel: Bool, into d: inout PacketDescription) {
        let channel = leChannel ? "LE Signaling" : "L2CAP Signaling"
        var i = payload.startIndex
        var first = true
        repeat {
            guard payload.endIndex - i >= 4 else {
                d.say(channel)
                d.fail(DecodeError(.truncated(needed: 4, available: payload.endIndex - i), layer: "l2cap",
                                   field: "Signaling command header", offset: 4 + (i - payload.startIndex)))
                return
            }
            let code = payload[i]
            let length = Int(UInt16(payload[i &+ 2]) | UInt16(payload[i &+ 3]) << 8)
            d.say((first ? channel + " " : "") + name(code))
            d.add("identifier", payload[i &+ 1])
            d.addHex("signaling_code", code, digits: 2, shown: false)
            let dataStart = i &+ 4
            let data = payload[dataStart...].prefix(length)
            if let layout = layouts[code] {
                ParameterDecoder.decode(layout.fields, data, into: &d, layer: "l2cap")
            } else if !data.isEmpty {
                d.add("data", hexString(data.prefix(64)))
            }
            if data.count < length {
                d.fail(DecodeError(.truncated(needed: length, available: data.count), layer: "l2cap",
                                   field: "Signaling command data", offset: 8 + (i - payload.startIndex)))
                return
            }
            i = dataStart &+ length
            first = false
        } while !leChannel && i < payload.endIndex
        if i < payload.endIndex {
            d.add("trailing", hexString(payload[i...].prefix(64)))
        }
    }
}
