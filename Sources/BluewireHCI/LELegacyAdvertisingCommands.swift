import BluewireCore

/// LE Set Advertising Parameters (Core Vol 4 Part E §7.8.5): legacy advertising.
/// Intervals are in 0.625 ms units (0x0020…0x4000).
public struct LESetAdvertisingParameters: HCICommandParameters {
    public static var opcode: HCIOpcode { .leSetAdvertisingParameters }
    public var advertisingIntervalMin: UInt16
    public var advertisingIntervalMax: UInt16
    /// 0x00 ADV_IND, 0x01 ADV_DIRECT_IND high duty, 0x02 ADV_SCAN_IND, 0x03 ADV_NONCONN_IND,
    /// 0x04 ADV_DIRECT_IND low duty.
    public var advertisingType: UInt8
    public var ownAddressType: UInt8
    /// Used only by directed advertising; its type is Peer_Address_Type.
    public var peerAddress: BluetoothAddress
    /// Bit 0 channel 37, bit 1 channel 38, bit 2 channel 39.
    public var advertisingChannelMap: UInt8
    public var advertisingFilterPolicy: UInt8

    public init(
        advertisingIntervalMin: UInt16 = 0x00A0, advertisingIntervalMax: UInt16 = 0x00A0,
        advertisingType: UInt8 = 0x00, ownAddressType: UInt8 = 0x01,
        peerAddress: BluetoothAddress = BluetoothAddress(value: 0),
        advertisingChannelMap: UInt8 = 0x07, advertisingFilterPolicy: UInt8 = 0x00
    ) {
        self.advertisingIntervalMin = advertisingIntervalMin
        self.advertisingIntervalMax = advertisingIntervalMax
        self.advertisingType = advertisingType
        self.ownAddressType = ownAddressType
        self.peerAddress = peerAddress
        self.advertisingChannelMap = advertisingChannelMap
        self.advertisingFilterPolicy = advertisingFilterPolicy
    }

    public func encode(into writer: inout ByteWriter) {
        writer.append(advertisingIntervalMin)
        writer.append(advertisingIntervalMax)
        writer.append(advertisingType)
        writer.append(ownAddressType)
        writer.append(peerAddress.type.rawValue)
        writer.append(peerAddress)
        writer.append(advertisingChannelMap)
        writer.append(advertisingFilterPolicy)
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        advertisingIntervalMin = try reader.readUInt16("Advertising_Interval_Min")
        advertisingIntervalMax = try reader.readUInt16("Advertising_Interval_Max")
        advertisingType = try reader.readUInt8("Advertising_Type")
        ownAddressType = try reader.readUInt8("Own_Address_Type")
        let peerType = BluetoothAddress.AddressType(hciValue: try reader.readUInt8("Peer_Address_Type"))
        peerAddress = try reader.readAddress(type: peerType, "Peer_Address")
        advertisingChannelMap = try reader.readUInt8("Advertising_Channel_Map")
        advertisingFilterPolicy = try reader.readUInt8("Advertising_Filter_Policy")
    }
}

/// The legacy data commands always carry 32 parameter octets: a length and 31 data octets, zero-padded
/// (Core Vol 4 Part E §7.8.7, §7.8.8).
@usableFromInline
enum LegacyAdvertisingPayload {
    static let maxLength = 31

    static func encode(_ data: ArraySlice<UInt8>, into writer: inout ByteWriter) {
        let count = min(data.count, maxLength)
        writer.append(UInt8(count))
        writer.append(contentsOf: data.prefix(count))
        for _ in count..<maxLength { writer.append(UInt8(0)) }
    }

    static func decode(_ reader: inout ByteReader, lengthField: StaticString, dataField: StaticString) throws(DecodeError) -> ArraySlice<UInt8> {
        let lengthOffset = reader.offset
        let length = try reader.readUInt8(lengthField)
        guard Int(length) <= maxLength else {
            throw DecodeError(.invalidValue(UInt64(length)), layer: "hci", field: lengthField, offset: lengthOffset)
        }
        let data = try reader.readBytes(Int(length), dataField)
        // Padding up to 31 octets is optional on decode: some hosts send only the significant part.
        _ = try? reader.skip(min(maxLength - Int(length), reader.remainingCount), dataField)
        return data
    }
}

/// LE Set Advertising Data (§7.8.7): at most 31 octets of AD structures for legacy advertising.
/// Longer data is cut to 31 octets when encoding; use `AdvertisingDataBuilder` to get a clear error instead.
public struct LESetAdvertisingData: HCICommandParameters {
    public static var opcode: HCIOpcode { .leSetAdvertisingData }
    public var advertisingData: ArraySlice<UInt8>

    public init(advertisingData: ArraySlice<UInt8>) { self.advertisingData = advertisingData }
    public init(advertisingData: [UInt8]) { self.advertisingData = advertisingData[...] }

    public func encode(into writer: inout ByteWriter) {
        LegacyAdvertisingPayload.encode(advertisingData, into: &writer)
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        advertisingData = try LegacyAdvertisingPayload.decode(
            &reader, lengthField: "Advertising_Data_Length", dataField: "Advertising_Data")
    }
}

/// LE Set Scan Response Data (§7.8.8): at most 31 octets returned to active scanners.
public struct LESetScanResponseData: HCICommandParameters {
    public static var opcode: HCIOpcode { .leSetScanResponseData }
    public var scanResponseData: ArraySlice<UInt8>

    public init(scanResponseData: ArraySlice<UInt8>) { self.scanResponseData = scanResponseData }
    public init(scanResponseData: [UInt8]) { self.scanResponseData = scanResponseData[...] }

    public func encode(into writer: inout ByteWriter) {
        LegacyAdvertisingPayload.encode(scanResponseData, into: &writer)
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        scanResponseData = try LegacyAdvertisingPayload.decode(
            &reader, lengthField: "Scan_Response_Data_Length", dataField: "Scan_Response_Data")
    }
}

/// LE Set Advertising Enable (§7.8.9).
public struct LESetAdvertisingEnable: HCICommandParameters {
    public static var opcode: HCIOpcode { .leSetAdvertisingEnable }
    public var enable: Bool

    public init(enable: Bool) { self.enable = enable }

    public func encode(into writer: inout ByteWriter) { writer.append(UInt8(enable ? 1 : 0)) }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        enable = try reader.readUInt8("Advertising_Enable") != 0
    }
}
