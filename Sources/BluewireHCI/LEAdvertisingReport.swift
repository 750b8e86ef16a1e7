import BluewireCore

/// One legacy advertising report (Core Vol 4 Part E §7.7.65.2): the PDU type, the advertiser,
/// up to 31 octets of AD structures (a slice of the event, not a copy) and the RSSI.
public struct LEAdvertisingReport: LEReport {
    /// 0x00 ADV_IND, 0x01 ADV_DIRECT_IND, 0x02 ADV_SCAN_IND, 0x03 ADV_NONCONN_IND, 0x04 SCAN_RSP.
    public var eventType: UInt8
    public var address: BluetoothAddress
    public var data: ArraySlice<UInt8>
    /// dBm; 127 means not available.
    public var rssi: Int8

    public init(eventType: UInt8, address: BluetoothAddress, data: ArraySlice<UInt8>, rssi: Int8) {
        self.eventType = eventType
        self.address = address
        self.data = data
        self.rssi = rssi
    }

    @inlinable
    public init(decoding r: inout ByteReader) throws(DecodeError) {
        eventType = try r.readUInt8("Event_Type")
        let type = BluetoothAddress.AddressType(hciValue: try r.readUInt8("Address_Type"))
        address = try r.readAddress(type: type, "Address")
        let length = try r.readUInt8("Data_Length")
        data = try r.readBytes(Int(length), "Data")
        rssi = try r.readInt8("RSSI")
    }

    /// ADV_IND and ADV_DIRECT_IND accept connections.
    @inlinable public var isConnectable: Bool { eventType == 0x00 || eventType == 0x01 }
    @inlinable public var isScanResponse: Bool { eventType == 0x04 }
    /// The AD structures in `data`.
    @inlinable public var advertisingData: AdvertisingData { AdvertisingData(data) }
}

/// One directed advertising report (§7.7.65.11): ADV_DIRECT_IND addressed to a resolvable private
/// address the controller could not resolve.
public struct LEDirectedAdvertisingReport: LEReport {
    /// Always 0x01 (ADV_DIRECT_IND).
    public var eventType: UInt8
    public var address: BluetoothAddress
    public var directAddress: BluetoothAddress
    public var rssi: Int8

    @inlinable
    public init(decoding r: inout ByteReader) throws(DecodeError) {
        eventType = try r.readUInt8("Event_Type")
        let type = BluetoothAddress.AddressType(hciValue: try r.readUInt8("Address_Type"))
        address = try r.readAddress(type: type, "Address")
        let directType = BluetoothAddress.AddressType(hciValue: try r.readUInt8("Direct_Address_Type"))
        directAddress = try r.readAddress(type: directType, "Direct_Address")
        rssi = try r.readInt8("RSSI")
    }
}
