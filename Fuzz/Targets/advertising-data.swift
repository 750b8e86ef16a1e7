import BluewireCore
import BluewireHCI

// AD structure parsing, extended advertising reassembly and per-device aggregation, fed the reports
// a scan delivers.
//
// Input: one filter byte, then reports, each: a kind byte, an advertiser byte, an RSSI byte, a length
// byte and that many octets of advertising data.
//   filter byte: 0 or 1 no filter; 2 Heart Rate service; 3 name prefix "Mi"; else address 0x…01.
//   kind: bit 0 scan response, bit 1 extended report, bits 2–3 Data_Status (extended), bit 4
//   connectable, bits 5–7 advertising SID.
//   advertiser: bits 0–3 pick one of 16 addresses, bit 4 random rather than public.
//
// Invariants checked (never a trap):
// - AD structures are slices of the data, and re-encoding them with AdvertisingDataBuilder (raw
//   elements) gives back the data up to where parsing stopped; `error` is set exactly when a Length
//   overran the data;
// - typed values never trap, UUID lists yield count/width UUIDs;
// - reassembled extended data never exceeds 1,650 octets and at most maxPendingChains chains wait;
// - the aggregator holds one device per address, emits only devices that match its filter, emits a
//   device again only when its content changed (the same report twice emits at most once), and a
//   device's service UUIDs include every UUID advertised in its latest data.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let filter: AdvertisingFilter
    switch input.byte() {
    case 0, 1: filter = AdvertisingFilter()
    case 2: filter = AdvertisingFilter(serviceUUIDs: [BluetoothUUID(0x180D)])
    case 3: filter = AdvertisingFilter(namePrefix: "Mi")
    default: filter = AdvertisingFilter(addresses: [BluetoothAddress(value: 0xC0_00_00_00_00_01)])
    }
    var aggregator = AdvertisingAggregator(filter: filter)
    var reassembler = ExtendedAdvertisingReassembler(maxPendingChains: 4)
    var addresses: Set<BluetoothAddress> = []
    var now = MonotonicInstant.zero
    var reports = 0
    while !input.isAtEnd && reports < 128 {
        reports += 1
        let kind = input.byte()
        let who = input.byte()
        let rssi = Int8(bitPattern: input.byte())
        let adv = input.lengthPrefixed()
        now = now + .milliseconds(10)
        checkAdvertisingData(adv)
        let address = BluetoothAddress(value: 0xC0_00_00_00_00_00 | UInt64(who & 0x0F), type: who & 0x10 == 0 ? .public : .random)
        let scanResponse = kind & 1 != 0
        let connectable = kind & 0x10 != 0
        if kind & 2 == 0 {
            let report = LEAdvertisingReport(
                eventType: scanResponse ? 0x04 : (connectable ? 0x00 : 0x03), address: address, data: adv, rssi: rssi)
            addresses.insert(address)
            checkAggregator(&aggregator) { $0.add(report, now: now) }
        } else {
            var type: LEExtendedAdvertisingReport.EventType = []
            if scanResponse { type.insert(.scanResponse); type.insert(.scannable) }
            if connectable { type.insert(.connectable) }
            type.rawValue |= UInt16((kind >> 2) & 0b11) << 5
            let report = LEExtendedAdvertisingReport(
                eventType: type, address: address, secondaryPHY: 1, advertisingSID: kind >> 5, rssi: rssi, data: adv)
            if let whole = reassembler.add(report) {
                require(whole.report.data.count <= ExtendedAdvertisingReassembler.maxDataLength,
                        "reassembled \(whole.report.data.count) octets")
                checkAdvertisingData(whole.report.data)
                addresses.insert(address)
                checkAggregator(&aggregator) { $0.add(whole.report, now: now) }
            }
            require(reassembler.pendingCount <= reassembler.maxPendingChains, "\(reassembler.pendingCount) chains pending")
        }
        require(aggregator.devices.count <= addresses.count, "\(aggregator.devices.count) devices from \(addresses.count) addresses")
    }
    return 0
}

func checkAggregator(_ aggregator: inout AdvertisingAggregator, _ add: (inout AdvertisingAggregator) -> DiscoveredDevice?) {
    if let device = add(&aggregator) {
        require(aggregator.filter.matches(device), "emitted \(device.address) that does not match the filter")
        require(aggregator.devices[device.address] == device, "emitted device differs from the stored one")
        for bytes in [device.advertisingData, device.scanResponse ?? []] {
            for structure in AdvertisingData(bytes) {
                if case .serviceUUIDs(let list, _) = structure.value {
                    for uuid in list {
                        require(device.serviceUUIDs.contains(uuid), "advertised \(uuid) missing from the device")
                    }
                }
            }
        }
    }
    // Nothing changed: the same report again must not be emitted again.
    require(add(&aggregator) == nil, "the same report emitted twice")
}

func checkAdvertisingData(_ data: ArraySlice<UInt8>) {
    let ad = AdvertisingData(data)
    var iterator = ad.makeIterator()
    var builder = AdvertisingDataBuilder(maxLength: 4096)
    var consumed = 0
    while let structure = iterator.next() {
        require(structure.data.isEmpty || (structure.data.startIndex >= data.startIndex && structure.data.endIndex <= data.endIndex),
                "AD structure outside the data")
        consumed += 2 + structure.data.count
        do {
            try builder.append(.raw(type: structure.type, data: Array(structure.data)))
        } catch {
            require(false, "builder refused a parsed structure: \(error)")
        }
        checkValue(structure)
    }
    require(builder.bytes[...] == data.prefix(consumed), "re-encoded AD structures differ from the data")
    let overran: Bool
    if consumed < data.count {
        // Parsing stopped early: at a zero Length (padding) or at a Length running past the end.
        let length = Int(data[data.startIndex + consumed])
        overran = length != 0
        if overran { require(length > data.count - consumed - 1, "stopped at a Length that fits") }
    } else {
        overran = false
    }
    require((iterator.error != nil) == overran, "error \(String(describing: iterator.error)) but overran=\(overran)")
    require((ad.error != nil) == overran, "AdvertisingData.error disagrees with its iterator")
    _ = ad.flags
    _ = ad.localName
    _ = ad.txPowerLevel
    _ = ad.appearance
    _ = ad.peripheralConnectionIntervalRange
    _ = ad.uri
    _ = ad.leRole
    _ = ad.manufacturerSpecificData
    _ = ad.serviceUUIDs
    _ = ad.serviceData
    _ = ad.containsServiceUUID(BluetoothUUID(0x180D))
}

func checkValue(_ structure: ADStructure) {
    switch structure.value {
    case .serviceUUIDs(let list, _):
        var count = 0
        for _ in list { count += 1 }
        require(count * list.width == list.bytes.count, "UUID list of \(list.bytes.count) octets gave \(count) UUIDs")
    case .serviceData(let uuid, let payload):
        require(payload.count <= structure.data.count, "service data payload longer than the structure")
        _ = uuid.description
    case .manufacturerSpecificData(_, let payload):
        require(payload.count + 2 == structure.data.count, "manufacturer payload size")
    default:
        break
    }
}
