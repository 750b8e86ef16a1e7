import BluewireCore
import BluewireHCI

/// Summaries of LE advertising reports (Core Vol 4 Part E §7.7.65.2, §7.7.65.13) and of the
/// advertising data they carry (Core Supplement Part A): who advertised, how loud, and what it says.
enum AdvertisingReportDescription {
    /// Legacy advertising PDU types as reported in Event_Type (§7.7.65.2).
    static func legacyTypeName(_ type: UInt8) -> String {
        switch type {
        case 0x00: return "ADV_IND"
        case 0x01: return "ADV_DIRECT_IND"
        case 0x02: return "ADV_SCAN_IND"
        case 0x03: return "ADV_NONCONN_IND"
        case 0x04: return "SCAN_RSP"
        default: return "0x" + hex(type, width: 2)
        }
    }

    static func legacy(_ event: LEAdvertisingReportEvent, into d: inout PacketDescription) {
        d.add("num_reports", event.numReports)
        let several = event.numReports > 1
        var i = 0
        for report in event {
            let suffix = several ? "_" + String(i) : ""
            if several { d.say("[" + String(i) + "]") }
            d.add("event_type" + suffix, legacyTypeName(report.eventType))
            d.add("address" + suffix, report.address.description)
            d.add("rssi" + suffix, report.rssi)
            advertisingData(report.data, suffix: suffix, into: &d)
            i += 1
        }
        if let error = event.error { d.fail(error) }
    }

    static func extended(_ event: LEExtendedAdvertisingReportEvent, into d: inout PacketDescription) {
        d.add("num_reports", event.numReports)
        let several = event.numReports > 1
        var i = 0
        for report in event {
            let suffix = several ? "_" + String(i) : ""
            if several { d.say("[" + String(i) + "]") }
            d.addHex("event_type" + suffix, report.eventType.rawValue)
            d.add("address" + suffix, report.address.type == .anonymous ? "anonymous" : report.address.description)
            d.add("rssi" + suffix, report.rssi)
            if report.txPower != 127 { d.add("tx_power" + suffix, report.txPower) }
            d.add("sid" + suffix, report.advertisingSID, shown: false)
            advertisingData(report.data, suffix: suffix, into: &d)
            i += 1
        }
        if let error = event.error { d.fail(error) }
    }

    /// Name, service UUIDs, manufacturer data and flags from advertising data; a structure that
    /// overruns the data (common on the air) is reported after what decoded.
    static func advertisingData(_ bytes: ArraySlice<UInt8>, suffix: String = "", into d: inout PacketDescription) {
        var uuids: [String] = []
        var iterator = AdvertisingData(bytes).makeIterator()
        while let structure = iterator.next() {
            switch structure.value {
            case .localName(let name, let complete):
                // Quoted in the text line, so that spaces and odd characters cannot blur it.
                let key = (complete ? "name" : "short_name") + suffix
                let text = String(decoding: name, as: UTF8.self)
                d.add(key, text, shown: false)
                d.say(key + "=" + JSONWriter.quoted(text))
            case .serviceUUIDs(let list, _):
                for uuid in list { uuids.append(uuid.description) }
            case .manufacturerSpecificData(let company, let data):
                d.add("manufacturer" + suffix, "0x" + hex(company, width: 4) + ":" + hexString(data.prefix(32)))
            case .serviceData(let uuid, let data):
                d.add("service_data" + suffix, uuid.shortString + ":" + hexString(data.prefix(32)))
            case .flags(let flags):
                d.addHex("flags" + suffix, flags.rawValue, digits: 2, shown: false)
            case .txPowerLevel(let power):
                d.add("ad_tx_power" + suffix, power, shown: false)
            case .appearance(let appearance):
                d.addHex("appearance" + suffix, appearance, shown: false)
            default:
                break
            }
        }
        if !uuids.isEmpty { d.add("uuids" + suffix, .strings(uuids)) }
        if let error = iterator.error { d.fail(error) }
    }
}
