import BluewireCore
import BluewireHCI

/// Summaries of HCI events (Core Vol 4 Part E §7.7): the event's name, its status, and for
/// completions the command they answer.
enum HCIEventDescription {
    static func describe(_ packet: ArraySlice<UInt8>, into d: inout PacketDescription) {
        guard let first = packet.first else {
            d.fail(DecodeError(.truncated(needed: 2, available: 0), layer: "hci", field: "Event_Code", offset: 0))
            return
        }
        let code = HCIEventCode(rawValue: first)
        d.addHex("event_code", first, digits: 2, shown: false)
        let event: HCIEvent
        do {
            event = try HCIEvent(decoding: packet)
        } catch {
            d.say(code.description)
            if code == .leMeta, packet.count >= 3 {
                d.say(LESubeventCode(rawValue: packet[packet.startIndex &+ 2]).description)
            }
            d.fail(error)
            return
        }
        switch event {
        case .commandComplete(let e):
            d.say(code.description + ": " + e.commandOpcode.description)
            d.addHex("command_opcode", e.commandOpcode.rawValue, shown: false)
            d.add("ncmd", e.numHCICommandPackets, shown: false)
            if let status = e.status { d.add("status", status.description) }
        case .commandStatus(let e):
            d.say(code.description + ": " + e.commandOpcode.description)
            d.addHex("command_opcode", e.commandOpcode.rawValue, shown: false)
            d.add("status", e.status.description)
        case .disconnectionComplete(let e):
            d.say(code.description)
            d.add("status", e.status.description)
            d.addHex("handle", e.connectionHandle)
            d.add("reason", e.reason.description)
        case .numberOfCompletedPackets(let e):
            d.say(code.description)
            var items: [String] = []
            for entry in e { items.append("0x" + hex(entry.connectionHandle, width: 4) + ":" + String(entry.numCompletedPackets)) }
            d.add("completed", .strings(items))
        case .encryptionChange(let e):
            d.say(code.description)
            d.add("status", e.status.description)
            d.addHex("handle", e.connectionHandle)
            d.add("encryption", e.encryptionEnabled)
            if let size = e.encryptionKeySize { d.add("key_size", size) }
        case .encryptionKeyRefreshComplete(let e):
            d.say(code.description)
            d.add("status", e.status.description)
            d.addHex("handle", e.connectionHandle)
        case .hardwareError(let hardwareCode):
            d.say(code.description)
            d.addHex("hardware_code", hardwareCode, digits: 2)
        case .readRemoteVersionInformationComplete(let e):
            d.say(code.description)
            d.add("status", e.status.description)
            d.addHex("handle", e.connectionHandle)
            d.add("version", e.version)
            d.addHex("company", e.manufacturerName)
        case .leMeta(let meta):
            d.say(code.description + ": " + meta.subeventCode.description)
            d.addHex("subevent", meta.subeventCode.rawValue, digits: 2, shown: false)
            describeLEMeta(meta, into: &d)
        case .unknown(_, let parameters):
            d.say(code.description)
            describeUnknown(code, parameters, into: &d)
        }
    }

    static func describeLEMeta(_ meta: LEMetaEvent, into d: inout PacketDescription) {
        switch meta {
        case .connectionComplete(let e), .enhancedConnectionComplete(let e):
            d.add("status", e.status.description)
            d.addHex("handle", e.connectionHandle)
            d.add("role", e.isCentral ? "central" : "peripheral")
            d.add("peer", e.peerAddress.description)
            d.add("interval", e.connectionInterval)
            d.add("latency", e.peripheralLatency)
            d.add("supervision_timeout", e.supervisionTimeout)
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
        case .connectionUpdateComplete(let e):
            d.add("status", e.status.description)
            d.addHex("handle", e.connectionHandle)
            d.add("interval", e.connectionInterval)
            d.add("latency", e.peripheralLatency)
            d.add("supervision_timeout", e.supervisionTimeout)
        case .readRemoteFeaturesComplete(let e):
            d.add("status", e.status.description)
            d.addHex("handle", e.connectionHandle)
        case .longTermKeyRequest(let e):
            d.addHex("handle", e.connectionHandle)
            d.addHex("ediv", e.encryptedDiversifier)
        case .dataLengthChange(let e):
            d.addHex("handle", e.connectionHandle)
            d.add("max_tx_octets", e.maxTxOctets)
            d.add("max_rx_octets", e.maxRxOctets)
        case .phyUpdateComplete(let e):
            d.add("status", e.status.description)
            d.addHex("handle", e.connectionHandle)
            d.add("tx_phy", e.txPHY)
            d.add("rx_phy", e.rxPHY)
        case .advertisingSetTerminated(let e):
            d.add("status", e.status.description)
            d.add("advertising_handle", e.advertisingHandle)
            d.addHex("handle", e.connectionHandle)
        case .channelSelectionAlgorithm(let e):
            d.addHex("handle", e.connectionHandle)
            d.add("algorithm", e.channelSelectionAlgorithm)
        case .unknown(_, let parameters):
            if !parameters.isEmpty { d.add("parameters", hexString(parameters.prefix(32))) }
        }
    }

    /// Events without a typed decoder: BR/EDR connection events still get their status and handle.
    static func describeUnknown(_ code: HCIEventCode, _ parameters: ArraySlice<UInt8>, into d: inout PacketDescription) {
        let s = parameters.startIndex
        switch code.rawValue {
        case 0x03 where parameters.count >= 3:
            // Connection Complete (§7.7.3): Status, Connection_Handle, BD_ADDR, Link_Type, ...
            d.add("status", HCIStatus(parameters[s]).description)
            d.addHex("handle", UInt16(parameters[s &+ 1]) | UInt16(parameters[s &+ 2] & 0x0F) << 8)
        default:
            if !parameters.isEmpty {
                d.add("parameters", hexString(parameters.prefix(32)) + (parameters.count > 32 ? "..." : ""))
            }
        }
    }
}
