import BluewireCore

/// One extended advertising report (Core Vol 4 Part E §7.7.65.13).
///
/// Extended advertising data can span several reports: Data_Status "incomplete, more data to come"
/// means the next report from the same advertiser (address + SID) continues it, up to 1,650 octets
/// (see `ExtendedAdvertisingReassembler`). Legacy PDUs seen by an extended scanner arrive here too,
/// with the legacy bit set.
public struct LEExtendedAdvertisingReport: LEReport {
    /// Event_Type bits: 0 connectable, 1 scannable, 2 directed, 3 scan response, 4 legacy,
    /// 5–6 data status.
    public struct EventType: OptionSet, Hashable, Sendable {
        public var rawValue: UInt16
        @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }
        public static let connectable = EventType(rawValue: 1 << 0)
        public static let scannable = EventType(rawValue: 1 << 1)
        public static let directed = EventType(rawValue: 1 << 2)
        public static let scanResponse = EventType(rawValue: 1 << 3)
        public static let legacy = EventType(rawValue: 1 << 4)

        /// Bits 5–6.
        @inlinable public var dataStatus: DataStatus {
            switch (rawValue >> 5) & 0b11 {
            case 0: .complete
            case 1: .incompleteMoreToCome
            case 2: .incompleteTruncated
            default: .reserved
            }
        }
    }

    /// Whether this report ends the advertiser's data (§7.7.65.13, Event_Type bits 5–6).
    public enum DataStatus: Hashable, Sendable {
        case complete
        case incompleteMoreToCome
        /// No more data will come: the controller dropped the rest.
        case incompleteTruncated
        case reserved
    }

    public var eventType: EventType
    /// Type 0xFF (`.anonymous`) when the advertiser sent no address.
    public var address: BluetoothAddress
    /// 0x01 LE 1M, 0x03 LE Coded.
    public var primaryPHY: UInt8
    /// 0x00 none, 0x01 LE 1M, 0x02 LE 2M, 0x03 LE Coded.
    public var secondaryPHY: UInt8
    /// 0x00…0x0F, or 0xFF when no ADI field was present (legacy PDUs).
    public var advertisingSID: UInt8
    /// dBm; 127 not available.
    public var txPower: Int8
    /// dBm; 127 not available.
    public var rssi: Int8
    /// 1.25 ms units; 0 when there is no periodic advertising.
    public var periodicAdvertisingInterval: UInt16
    public var directAddress: BluetoothAddress
    public var data: ArraySlice<UInt8>

    public init(
        eventType: EventType, address: BluetoothAddress, primaryPHY: UInt8 = 1, secondaryPHY: UInt8 = 0,
        advertisingSID: UInt8 = 0xFF, txPower: Int8 = 127, rssi: Int8, periodicAdvertisingInterval: UInt16 = 0,
        directAddress: BluetoothAddress = BluetoothAddress(value: 0), data: ArraySlice<UInt8>
    ) {
        self.eventType = eventType
        self.address = address
        self.primaryPHY = primaryPHY
        self.secondaryPHY = secondaryPHY
        self.advertisingSID = advertisingSID
        self.txPower = txPower
        self.rssi = rssi
        self.periodicAdvertisingInterval = periodicAdvertisingInterval
        self.directAddress = directAddress
        self.data = data
    }

    @inlinable @inline(__always)
    public init(decoding r: inout ByteReader) throws(DecodeError) {
        eventType = EventType(rawValue: try r.readUInt16("Event_Type"))
        let type = BluetoothAddress.AddressType(hciValue: try r.readUInt8("Address_Type"))
        address = try r.readAddress(type: type, "Address")
        primaryPHY = try r.readUInt8("Primary_PHY")
        secondaryPHY = try r.readUInt8("Secondary_PHY")
        advertisingSID = try r.readUInt8("Advertising_SID")
        txPower = try r.readInt8("TX_Power")
        rssi = try r.readInt8("RSSI")
        periodicAdvertisingInterval = try r.readUInt16("Periodic_Advertising_Interval")
        let directType = BluetoothAddress.AddressType(hciValue: try r.readUInt8("Direct_Address_Type"))
        directAddress = try r.readAddress(type: directType, "Direct_Address")
        let length = try r.readUInt8("Data_Length")
        data = try r.readBytes(Int(length), "Data")
    }

    /// The fields up to Data_Length take 24 octets; the data follows.
    @inlinable @inline(__always)
    public init?(wellFormed bytes: ArraySlice<UInt8>, at index: inout Int) {
        let i = index
        guard i >= bytes.startIndex, i <= bytes.endIndex, bytes.endIndex - i >= 24 else { return nil }
        let length = Int(bytes[i + 23])
        guard bytes.endIndex - i - 24 >= length else { return nil }
        eventType = EventType(rawValue: UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8)
        address = BluetoothAddress(value: bytes.littleEndianUInt48(at: i + 3), type: .init(hciValue: bytes[i + 2]))
        primaryPHY = bytes[i + 9]
        secondaryPHY = bytes[i + 10]
        advertisingSID = bytes[i + 11]
        txPower = Int8(bitPattern: bytes[i + 12])
        rssi = Int8(bitPattern: bytes[i + 13])
        periodicAdvertisingInterval = UInt16(bytes[i + 14]) | UInt16(bytes[i + 15]) << 8
        directAddress = BluetoothAddress(value: bytes.littleEndianUInt48(at: i + 17), type: .init(hciValue: bytes[i + 16]))
        data = bytes[(i + 24)..<(i + 24 + length)]
        index = i + 24 + length
    }

    @inlinable public var dataStatus: DataStatus { eventType.dataStatus }
    @inlinable public var isConnectable: Bool { eventType.contains(.connectable) }
    @inlinable public var isScanResponse: Bool { eventType.contains(.scanResponse) }
    @inlinable public var isLegacy: Bool { eventType.contains(.legacy) }
    /// The AD structures in `data` (only this report's fragment when data is incomplete).
    @inlinable public var advertisingData: AdvertisingData { AdvertisingData(data) }
}
