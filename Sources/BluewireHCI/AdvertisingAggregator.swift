import BluewireCore

/// Merges advertising reports per device (address and address type) into `DiscoveredDevice`
/// values for a scan: the advertising data and the scan response are kept separately and combined,
/// duplicates only refresh RSSI, and a device is emitted when first seen (and matching the
/// filter) or when its content changes.
///
/// Accepts legacy and extended reports; feed extended reports through an
/// `ExtendedAdvertisingReassembler` first so that chained data arrives whole. bumble's controller
/// sends each advertisement twice (event type 0x0001, then 0x0008 as a "scan response" with the
/// same data); that merges into one device and one emission.
public struct AdvertisingAggregator: Sendable {
    public var filter: AdvertisingFilter
    /// Every device seen, matching the filter or not, with the latest RSSI.
    public private(set) var devices: [BluetoothAddress: DiscoveredDevice] = [:]
    var emitted: [BluetoothAddress: DiscoveredDevice] = [:]

    public init(filter: AdvertisingFilter = AdvertisingFilter()) {
        self.filter = filter
    }

    /// Adds a legacy report; returns the device if it is new or changed and matches the filter.
    public mutating func add(_ report: LEAdvertisingReport, now: MonotonicInstant) -> DiscoveredDevice? {
        add(address: report.address, data: report.data, isScanResponse: report.isScanResponse,
            connectable: report.isConnectable, rssi: report.rssi, reportTxPower: nil, now: now)
    }

    /// Adds an extended report (whole, after reassembly).
    public mutating func add(_ report: LEExtendedAdvertisingReport, now: MonotonicInstant) -> DiscoveredDevice? {
        add(address: report.address, data: report.data, isScanResponse: report.isScanResponse,
            connectable: report.isConnectable, rssi: report.rssi,
            reportTxPower: report.txPower == 127 ? nil : report.txPower, now: now)
    }

    /// Forgets every device (a new scan).
    public mutating func reset() {
        devices.removeAll()
        emitted.removeAll()
    }

    mutating func add(
        address: BluetoothAddress, data: ArraySlice<UInt8>, isScanResponse: Bool, connectable: Bool, rssi: Int8,
        reportTxPower: Int8?, now: MonotonicInstant
    ) -> DiscoveredDevice? {
        var device = devices[address] ?? DiscoveredDevice(address: address, rssi: rssi, lastSeen: now)
        if rssi != 127 { device.rssi = rssi }
        device.lastSeen = now
        if isScanResponse {
            device.scanResponse = Array(data)
        } else {
            device.advertisingData = Array(data)
            device.connectable = connectable
        }
        Self.derive(&device, reportTxPower: reportTxPower)
        devices[address] = device
        guard filter.matches(device) else { return nil }
        if let previous = emitted[address], !device.differsInContent(from: previous) { return nil }
        emitted[address] = device
        return device
    }

    /// Recomputes the typed fields from advertising data first, then the scan response.
    static func derive(_ device: inout DiscoveredDevice, reportTxPower: Int8?) {
        var name: String? = nil
        var nameIsComplete = false
        var uuids: [BluetoothUUID] = []
        var manufacturer: [DiscoveredDevice.ManufacturerData] = []
        var services: [DiscoveredDevice.ServiceData] = []
        var txPower: Int8? = nil
        var appearance: UInt16? = nil
        for bytes in [device.advertisingData, device.scanResponse ?? []] {
            for structure in AdvertisingData(bytes) {
                switch structure.value {
                case .localName(let raw, let complete):
                    if name == nil || (complete && !nameIsComplete) {
                        name = String(decoding: raw, as: UTF8.self)
                        nameIsComplete = complete
                    }
                case .serviceUUIDs(let list, _):
                    for uuid in list where !uuids.contains(uuid) { uuids.append(uuid) }
                case .manufacturerSpecificData(let company, let payload):
                    let entry = DiscoveredDevice.ManufacturerData(companyIdentifier: company, data: Array(payload))
                    if !manufacturer.contains(entry) { manufacturer.append(entry) }
                case .serviceData(let uuid, let payload):
                    let entry = DiscoveredDevice.ServiceData(uuid: uuid, data: Array(payload))
                    if !services.contains(entry) { services.append(entry) }
                case .txPowerLevel(let level):
                    if txPower == nil { txPower = level }
                case .appearance(let value):
                    if appearance == nil { appearance = value }
                default:
                    break
                }
            }
        }
        device.name = name
        device.serviceUUIDs = uuids
        device.manufacturerData = manufacturer
        device.serviceData = services
        device.txPower = txPower ?? reportTxPower ?? device.txPower
        device.appearance = appearance
    }
}
