import BluewireCore

/// LE Advertising Report (0x02) and LE Extended Advertising Report (0x0D) parameters, after the subevent code.
enum AdvertisingReports {
    /// Legacy report Event_Type (Core Vol 4 Part E §7.7.65.2): 0 ADV_IND, 1 ADV_DIRECT_IND,
    /// 2 ADV_SCAN_IND, 3 ADV_NONCONN_IND, 4 SCAN_RSP.
    static func legacyEventType(_ set: AdvertisingSet, isScanResponse: Bool) -> UInt8 {
        if isScanResponse { return 0x04 }
        if set.isDirected { return 0x01 }
        if set.isConnectable { return 0x00 }
        return set.isScannable ? 0x02 : 0x03
    }

    /// One report: Num_Reports, Event_Type, Address_Type, Address, Data_Length, Data, RSSI.
    static func legacy(set: AdvertisingSet, address: BluetoothAddress, isScanResponse: Bool, data: [UInt8], rssi: Int8) -> [UInt8] {
        var out: [UInt8] = [1, legacyEventType(set, isScanResponse: isScanResponse), hciAddressType(address)]
        out.appendAddress(address)
        out.append(UInt8(truncatingIfNeeded: data.count))
        out.append(contentsOf: data)
        out.append(UInt8(bitPattern: rssi))
        return out
    }

    /// Octets of data that fit one extended report event: 255 parameter octets, minus the subevent code,
    /// Num_Reports and the 24 fixed octets of a report.
    static let maxExtendedDataPerEvent = 255 - 2 - 24

    /// Extended reports (Core Vol 4 Part E §7.7.65.13), one per event. Data too long for one event is
    /// split, every part but the last with Data_Status "incomplete, more data to come" (0b01).
    static func extended(
        set: AdvertisingSet, address: BluetoothAddress, direct: BluetoothAddress?, isScanResponse: Bool,
        data: [UInt8], rssi: Int8
    ) -> [[UInt8]] {
        // Event_Type bits: 0 connectable, 1 scannable, 2 directed, 3 scan response, 4 legacy, 5–6 data status.
        var eventType = set.properties & 0x17
        if isScanResponse {
            eventType |= 0x08
            // A scan response to an extended advertisement says only "scannable" and "scan response".
            if !set.isLegacyPDU { eventType = 0x0A }
        }
        var chunks: [ArraySlice<UInt8>] = []
        var start = 0
        repeat {
            let end = min(start + maxExtendedDataPerEvent, data.count)
            chunks.append(data[start..<end])
            start = end
        } while start < data.count
        var events: [[UInt8]] = []
        for (index, chunk) in chunks.enumerated() {
            let status: UInt16 = index == chunks.count - 1 ? 0b00 : 0b01
            var out: [UInt8] = [1]
            out.appendLE(eventType | status << 5)
            if set.isAnonymous && !set.isLegacyPDU {
                out.append(0xFF)
                out.append(contentsOf: [UInt8](repeating: 0, count: 6))
            } else {
                out.append(hciAddressType(address))
                out.appendAddress(address)
            }
            out.append(set.isLegacyPDU ? PHY.le1M : set.primaryPHY)
            // Legacy PDUs use no secondary channel and carry no ADI (Advertising_SID 0xFF).
            out.append(set.isLegacyPDU ? 0x00 : set.secondaryPHY)
            out.append(set.isLegacyPDU ? 0xFF : set.sid)
            out.append(set.includesTxPower && !set.isLegacyPDU ? UInt8(bitPattern: set.txPower) : 0x7F)
            out.append(UInt8(bitPattern: rssi))
            out.appendLE(0)
            if let direct {
                out.append(direct.type.isRandom ? 0x01 : 0x00)
                out.appendAddress(direct)
            } else {
                out.append(0x00)
                out.append(contentsOf: [UInt8](repeating: 0, count: 6))
            }
            out.append(UInt8(truncatingIfNeeded: chunk.count))
            out.append(contentsOf: chunk)
            events.append(out)
        }
        return events
    }
}
