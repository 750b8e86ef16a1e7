import BluewireCore
import BluewireHCI

/// Descriptions of HCI events (Core Vol 4 Part E §7.7): the event's name and every parameter by name
/// from the layouts in `EventTable`; for Command Complete the command it answers and that command's
/// return parameters; for LE Meta the subevent.
enum HCIEventDescription {
    static func describe(_ packet: ArraySlice<UInt8>, into d: inout PacketDescription) {
        guard let code = packet.first else {
            d.fail(DecodeError(.truncated(needed: 2, available: 0), layer: "hci", field: "Event_Code", offset: 0))
            return
        }
        d.addHex("event_code", code, digits: 2, shown: false)
        let s = packet.startIndex
        guard packet.count >= 2 else {
            d.say(EventTable.describe(event: code))
            d.fail(DecodeError(.truncated(needed: 2, available: 1), layer: "hci",
                               field: "Parameter_Total_Length", offset: 1))
            return
        }
        let declared = Int(packet[s &+ 1])
        let parameters = packet[(s &+ 2)...].prefix(declared)
        switch code {
        case 0x0E:
            commandComplete(parameters, into: &d)
        case 0x0F:
            // Command Status (§7.7.15): Status, Num_HCI_Command_Packets, Command_Opcode.
            guard parameters.count >= 4 else {
                d.say(EventTable.describe(event: code))
                ParameterDecoder.decode([.status, .u8("ncmd"), .x16("command_opcode")], parameters, into: &d)
                return
            }
            let p = parameters.startIndex
            let opcode = UInt16(parameters[p &+ 2]) | UInt16(parameters[p &+ 3]) << 8
            d.say(EventTable.describe(event: code) + ": " + CommandTable.describe(opcode: opcode))
            d.addHex("command_opcode", opcode, shown: false)
            d.add("ncmd", parameters[p &+ 1], shown: false)
            d.add("status", HCIStatus(parameters[p]).description)
        case 0x13:
            d.say(EventTable.describe(event: code))
            numberOfCompletedPackets(parameters, into: &d)
        case 0x3E:
            leMeta(packet, parameters, into: &d)
        default:
            d.say(EventTable.describe(event: code))
            if let layout = EventTable.byCode[code] {
                ParameterDecoder.decode(layout.parameters, parameters, into: &d)
            } else if !parameters.isEmpty {
                d.add("parameters", hexString(parameters.prefix(64)) + (parameters.count > 64 ? "..." : ""))
            }
        }
        if declared != packet.count - 2 && d.error == nil {
            d.fail(DecodeError(.lengthMismatch(declared: declared, actual: packet.count - 2), layer: "hci",
                               field: "Parameter_Total_Length", offset: 1))
        }
    }

    /// Command Complete (§7.7.14): Num_HCI_Command_Packets, Command_Opcode, then the command's
    /// return parameters as §7.1–§7.8 lay them out.
    static func commandComplete(_ parameters: ArraySlice<UInt8>, into d: inout PacketDescription) {
        guard parameters.count >= 3 else {
            d.say(EventTable.describe(event: 0x0E))
            d.fail(DecodeError(.truncated(needed: 3, available: parameters.count), layer: "hci",
                               field: "Command_Opcode", offset: 2))
            return
        }
        let s = parameters.startIndex
        let opcode = UInt16(parameters[s &+ 1]) | UInt16(parameters[s &+ 2]) << 8
        d.say(EventTable.describe(event: 0x0E) + ": " + CommandTable.describe(opcode: opcode))
        d.addHex("command_opcode", opcode, shown: false)
        d.add("ncmd", parameters[s], shown: false)
        let returns = parameters[(s &+ 3)...]
        if let layout = CommandTable.layout(opcode) {
            ParameterDecoder.decode(layout.returns, returns, into: &d)
        } else if !returns.isEmpty {
            d.add("return_parameters", hexString(returns.prefix(64)) + (returns.count > 64 ? "..." : ""))
        }
    }

    /// Number Of Completed Packets (§7.7.19): handle:count pairs.
    static func numberOfCompletedPackets(_ parameters: ArraySlice<UInt8>, into d: inout PacketDescription) {
        guard let count = parameters.first else {
            d.fail(DecodeError(.truncated(needed: 1, available: 0), layer: "hci", field: "Num_Handles", offset: 2))
            return
        }
        var items: [String] = []
        var i = parameters.startIndex &+ 1
        for _ in 0..<Int(count) {
            guard parameters.endIndex - i >= 4 else {
                d.add("completed", .strings(items))
                d.fail(DecodeError(.truncated(needed: 4, available: parameters.endIndex - i), layer: "hci",
                                   field: "Num_Completed_Packets", offset: i - parameters.startIndex + 2))
                return
            }
            let handle = UInt16(parameters[i]) | UInt16(parameters[i &+ 1] & 0x0F) << 8
            let packets = UInt16(parameters[i &+ 2]) | UInt16(parameters[i &+ 3]) << 8
            items.append("0x" + hex(handle, width: 4) + ":" + String(packets))
            i &+= 4
        }
        d.add("completed", .strings(items))
    }

    /// LE Meta (§7.7.65): advertising reports through their typed decoders, other subevents by layout.
    static func leMeta(_ packet: ArraySlice<UInt8>, _ parameters: ArraySlice<UInt8>, into d: inout PacketDescription) {
        guard let subevent = parameters.first else {
            d.say(EventTable.describe(event: 0x3E))
            d.fail(DecodeError(.truncated(needed: 1, available: 0), layer: "hci", field: "Subevent_Code", offset: 2))
            return
        }
        d.say(EventTable.describe(event: 0x3E) + ": " + EventTable.describe(subevent: subevent))
        d.addHex("subevent", subevent, digits: 2, shown: false)
        switch subevent {
        case 0x02, 0x0B, 0x0D:
            let event: HCIEvent
            do {
                event = try HCIEvent(decoding: packet)
            } catch {
                d.fail(error)
                return
            }
            guard case .leMeta(let meta) = event else { return }
            switch meta {
            case .advertisingReport(let event):
                AdvertisingReportDescription.legacy(event, into: &d)
            case .extendedAdvertisingReport(let event):
                AdvertisingReportDescription.extended(event, into: &d)
            case .directedAdvertisingReport(let event):
                d.add("num_reports", event.numReports)
                for report in event {
                    d.add("address", report.address.description)
                    d.add("rssi", report.rssi)
                }
                if let error = event.error { d.fail(error) }
            default:
                break
            }
        default:
            let rest = parameters.dropFirst()
            if let layout = EventTable.bySubevent[subevent] {
                ParameterDecoder.decode(layout.parameters, rest, into: &d)
            } else if !rest.isEmpty {
                d.add("parameters", hexString(rest.prefix(64)) + (rest.count > 64 ? "..." : ""))
            }
        }
    }
}
