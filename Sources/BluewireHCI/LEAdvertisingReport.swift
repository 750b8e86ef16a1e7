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

    @inlinable @inline(__always)
    public init(decoding r: inout ByteReader) throws(DecodeError) {
        eventType = try r.readUInt8("Event_Type")
        let type = BluetoothAddress.AddressType(hciValue: try r.readUInt8("Address_Type"))
        address = try r.readAddress(type: type, "Address")
        let length = try r.readUInt8("Data_Length")
        data = try r.readBytes(Int(length), "Data")
        rssi = try r.readInt8("RSSI")
    }

    /// Event_Type, Address_Type, Address, Data_Length, then Data and RSSI: 10 octets and the data.
    @inlinable @inline(__always)
    public init?(wellFormed bytes: ArraySlice<UInt8>, at index: inout Int) {
        let i = index
        guard i >= bytes.startIndex, i <= bytes.endIndex, bytes.endIndex - i >= 10 else { return nil }
        let length = Int(bytes[i + 8])
        guard bytes.endIndex - i - 10 >= length else { return nil }
        eventType = bytes[i]
        address = BluetoothAddress(value: bytes.littleEndianUInt48(at: i + 2), type: .init(hciValue: bytes[i + 1]))
        data = bytes[(i + 9)..<(i + 9 + length)]
        rssi = Int8(bitPattern: bytes[i + 9 + length])
        index = i + 10 + length
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

    /// Event_Type, Address_Type, Address, Direct_Address_Type, Direct_Address, RSSI: 16 octets.
    @inlinable @inline(__always)
    public init?(wellFormed bytes: ArraySlice<UInt8>, at index: inout Int) {
        let i = index
        guard i >= bytes.startIndex, i <= bytes.endIndex, bytes.endIndex - i >= 16 else { return nil }
        eventType = bytes[i]
        address = BluetoothAddress(value: bytes.littleEndianUInt48(at: i + 2), type: .init(hciValue: bytes[i + 1]))
        directAddress = BluetoothAddress(value: bytes.littleEndianUInt48(at: i + 9), type: .init(hciValue: bytes[i + 8]))
        rssi = Int8(bitPattern: bytes[i + 15])
        index = i + 16
    }
}
