import BluewireCore

/// One advertiser as seen while scanning, merged from its advertising data and scan response.
public struct DiscoveredDevice: Hashable, Sendable {
    /// Manufacturer Specific Data: a company identifier (Assigned Numbers) and its payload.
    public struct ManufacturerData: Hashable, Sendable {
        public var companyIdentifier: UInt16
        public var data: [UInt8]
        public init(companyIdentifier: UInt16, data: [UInt8]) {
            self.companyIdentifier = companyIdentifier
            self.data = data
        }
    }

    /// Service Data for one service UUID.
    public struct ServiceData: Hashable, Sendable {
        public var uuid: BluetoothUUID
        public var data: [UInt8]
        public init(uuid: BluetoothUUID, data: [UInt8]) {
            self.uuid = uuid
            self.data = data
        }
    }

    /// The advertiser's address; its `type` says public or random.
    public var address: BluetoothAddress
    public var addressType: BluetoothAddress.AddressType { address.type }
    /// The identity address `address` resolves to, when it is a resolvable private address and a bond's
    /// IRK resolves it (Core Vol 3 Part C §10.8.2.3; filled by the host engine); nil otherwise.
    public var identityAddress: BluetoothAddress?
    /// dBm of the latest report.
    public var rssi: Int8
    /// Complete or shortened local name.
    public var name: String?
    public var serviceUUIDs: [BluetoothUUID]
    public var manufacturerData: [ManufacturerData]
    public var serviceData: [ServiceData]
    /// TX Power Level AD structure, else the extended report's TX_Power when available.
    public var txPower: Int8?
    public var appearance: UInt16?
    /// From the latest advertising PDU (not the scan response, which carries no such information).
    public var connectable: Bool
    public var advertisingData: [UInt8]
    public var scanResponse: [UInt8]?
    /// When the latest report arrived.
    public var lastSeen: MonotonicInstant

    public init(
        address: BluetoothAddress, rssi: Int8, name: String? = nil, serviceUUIDs: [BluetoothUUID] = [],
        manufacturerData: [ManufacturerData] = [], serviceData: [ServiceData] = [], txPower: Int8? = nil,
        appearance: UInt16? = nil, connectable: Bool = false, advertisingData: [UInt8] = [], scanResponse: [UInt8]? = nil,
        lastSeen: MonotonicInstant = .zero
    ) {
        self.address = address
        self.rssi = rssi
        self.name = name
        self.serviceUUIDs = serviceUUIDs
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.txPower = txPower
        self.appearance = appearance
        self.connectable = connectable
        self.advertisingData = advertisingData
        self.scanResponse = scanResponse
        self.lastSeen = lastSeen
    }

    /// Whether anything but RSSI and timing differs: what makes a report worth emitting again.
    ///
    /// Names are compared as the octets that went over the air, not as Unicode strings: two
    /// advertisements differ when their bytes do, and byte comparison keeps String's
    /// normalization tables (about 32 KB) out of firmware images.
    public func differsInContent(from other: DiscoveredDevice) -> Bool {
        !Self.sameOctets(name, other.name) || serviceUUIDs != other.serviceUUIDs || manufacturerData != other.manufacturerData
            || serviceData != other.serviceData || txPower != other.txPower || appearance != other.appearance
            || connectable != other.connectable || address != other.address
    }

    private static func sameOctets(_ a: String?, _ b: String?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a?, let b?): a.utf8.elementsEqual(b.utf8)
        default: false
        }
    }
}

/// Which devices a scan reports. Every set criterion must match; within `serviceUUIDs` and
/// `addresses` any one entry suffices. An empty filter matches everything.
public struct AdvertisingFilter: Hashable, Sendable {
    public var serviceUUIDs: [BluetoothUUID]
    public var namePrefix: String?
    public var addresses: [BluetoothAddress]

    public init(serviceUUIDs: [BluetoothUUID] = [], namePrefix: String? = nil, addresses: [BluetoothAddress] = []) {
        self.serviceUUIDs = serviceUUIDs
        self.namePrefix = namePrefix
        self.addresses = addresses
    }

    public func matches(_ device: DiscoveredDevice) -> Bool {
        if !serviceUUIDs.isEmpty {
            let advertised = device.serviceUUIDs + device.serviceData.map { $0.uuid }
            guard serviceUUIDs.contains(where: { advertised.contains($0) }) else { return false }
        }
        if let namePrefix, !namePrefix.isEmpty {
            guard let name = device.name, name.utf8.starts(with: namePrefix.utf8) else { return false }
        }
        if !addresses.isEmpty {
            // A filter address given without `/random` matches the device's bits of either type.
            guard addresses.contains(where: { $0 == device.address || ($0.value == device.address.value && $0.type == .public) })
            else { return false }
        }
        return true
    }
}
