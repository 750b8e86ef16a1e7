import BluewireCore

/// LE Set Extended Advertising Parameters [v1] (Core Vol 4 Part E §7.8.53): configures one advertising set.
/// Intervals are 24-bit, in 0.625 ms units; the command returns the TX power the controller selected.
public struct LESetExtendedAdvertisingParameters: HCICommandParameters {
    public static var opcode: HCIOpcode { .leSetExtendedAdvertisingParameters }

    /// Advertising_Event_Properties bits (§7.8.53): bit 4 selects legacy PDUs.
    public struct EventProperties: OptionSet, Hashable, Sendable {
        public var rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }
        public static let connectable = EventProperties(rawValue: 1 << 0)
        public static let scannable = EventProperties(rawValue: 1 << 1)
        public static let directed = EventProperties(rawValue: 1 << 2)
        public static let highDutyCycleDirected = EventProperties(rawValue: 1 << 3)
        public static let legacy = EventProperties(rawValue: 1 << 4)
        public static let anonymous = EventProperties(rawValue: 1 << 5)
        public static let includeTxPower = EventProperties(rawValue: 1 << 6)
    }

    public var advertisingHandle: UInt8
    public var eventProperties: EventProperties
    public var primaryAdvertisingIntervalMin: UInt32
    public var primaryAdvertisingIntervalMax: UInt32
    public var primaryAdvertisingChannelMap: UInt8
    public var ownAddressType: UInt8
    public var peerAddress: BluetoothAddress
    public var advertisingFilterPolicy: UInt8
    /// dBm, or 0x7F (127) for "no preference".
    public var advertisingTxPower: Int8
    /// 0x01 LE 1M, 0x03 LE Coded.
    public var primaryAdvertisingPHY: UInt8
    public var secondaryAdvertisingMaxSkip: UInt8
    /// 0x01 LE 1M, 0x02 LE 2M, 0x03 LE Coded.
    public var secondaryAdvertisingPHY: UInt8
    public var advertisingSID: UInt8
    public var scanRequestNotificationEnable: Bool

    public init(
        advertisingHandle: UInt8 = 0, eventProperties: EventProperties = [.connectable, .scannable, .legacy],
        primaryAdvertisingIntervalMin: UInt32 = 0x00A0, primaryAdvertisingIntervalMax: UInt32 = 0x00A0,
        primaryAdvertisingChannelMap: UInt8 = 0x07, ownAddressType: UInt8 = 0x01,
        peerAddress: BluetoothAddress = BluetoothAddress(value: 0), advertisingFilterPolicy: UInt8 = 0,
        advertisingTxPower: Int8 = 0x7F, primaryAdvertisingPHY: UInt8 = 0x01, secondaryAdvertisingMaxSkip: UInt8 = 0,
        secondaryAdvertisingPHY: UInt8 = 0x01, advertisingSID: UInt8 = 0, scanRequestNotificationEnable: Bool = false
    ) {
        self.advertisingHandle = advertisingHandle
        self.eventProperties = eventProperties
        self.primaryAdvertisingIntervalMin = primaryAdvertisingIntervalMin
        self.primaryAdvertisingIntervalMax = primaryAdvertisingIntervalMax
        self.primaryAdvertisingChannelMap = primaryAdvertisingChannelMap
        self.ownAddressType = ownAddressType
        self.peerAddress = peerAddress
        self.advertisingFilterPolicy = advertisingFilterPolicy
        self.advertisingTxPower = advertisingTxPower
        self.primaryAdvertisingPHY = primaryAdvertisingPHY
        self.secondaryAdvertisingMaxSkip = secondaryAdvertisingMaxSkip
        self.secondaryAdvertisingPHY = secondaryAdvertisingPHY
        self.advertisingSID = advertisingSID
        self.scanRequestNotificationEnable = scanRequestNotificationEnable
    }

    public func encode(into writer: inout ByteWriter) {
        writer.append(advertisingHandle)
        writer.append(eventProperties.rawValue)
        writer.appendUInt24(primaryAdvertisingIntervalMin)
        writer.appendUInt24(primaryAdvertisingIntervalMax)
        writer.append(primaryAdvertisingChannelMap)
        writer.append(ownAddressType)
        writer.append(peerAddress.type.rawValue)
        writer.append(peerAddress)
        writer.append(advertisingFilterPolicy)
        writer.append(advertisingTxPower)
        writer.append(primaryAdvertisingPHY)
        writer.append(secondaryAdvertisingMaxSkip)
        writer.append(secondaryAdvertisingPHY)
        writer.append(advertisingSID)
        writer.append(UInt8(scanRequestNotificationEnable ? 1 : 0))
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        advertisingHandle = try reader.readUInt8("Advertising_Handle")
        eventProperties = EventProperties(rawValue: try reader.readUInt16("Advertising_Event_Properties"))
        primaryAdvertisingIntervalMin = try reader.readUInt24("Primary_Advertising_Interval_Min")
        primaryAdvertisingIntervalMax = try reader.readUInt24("Primary_Advertising_Interval_Max")
        primaryAdvertisingChannelMap = try reader.readUInt8("Primary_Advertising_Channel_Map")
        ownAddressType = try reader.readUInt8("Own_Address_Type")
        let peerType = BluetoothAddress.AddressType(hciValue: try reader.readUInt8("Peer_Address_Type"))
        peerAddress = try reader.readAddress(type: peerType, "Peer_Address")
        advertisingFilterPolicy = try reader.readUInt8("Advertising_Filter_Policy")
        advertisingTxPower = try reader.readInt8("Advertising_TX_Power")
        primaryAdvertisingPHY = try reader.readUInt8("Primary_Advertising_PHY")
        secondaryAdvertisingMaxSkip = try reader.readUInt8("Secondary_Advertising_Max_Skip")
        secondaryAdvertisingPHY = try reader.readUInt8("Secondary_Advertising_PHY")
        advertisingSID = try reader.readUInt8("Advertising_SID")
        scanRequestNotificationEnable = try reader.readUInt8("Scan_Request_Notification_Enable") != 0
    }
}

/// The shared layout of LE Set Extended Advertising Data (§7.8.54) and LE Set Extended Scan Response
/// Data (§7.8.55): up to 251 octets per command, with Operation saying which fragment this is
/// (0x00 intermediate, 0x01 first, 0x02 last, 0x03 complete, 0x04 unchanged data).
public struct ExtendedAdvertisingDataFragment: Hashable, Sendable {
    public static let maxFragmentLength = 251
    public var advertisingHandle: UInt8
    public var operation: UInt8
    /// 0x00 the controller may fragment, 0x01 it should not.
    public var fragmentPreference: UInt8
    public var data: ArraySlice<UInt8>

    public init(advertisingHandle: UInt8 = 0, operation: UInt8 = 0x03, fragmentPreference: UInt8 = 0x01, data: ArraySlice<UInt8>) {
        self.advertisingHandle = advertisingHandle
        self.operation = operation
        self.fragmentPreference = fragmentPreference
        self.data = data
    }

    public func encode(into writer: inout ByteWriter) {
        writer.append(advertisingHandle)
        writer.append(operation)
        writer.append(fragmentPreference)
        writer.append(UInt8(truncatingIfNeeded: data.count))
        writer.append(contentsOf: data)
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        advertisingHandle = try reader.readUInt8("Advertising_Handle")
        operation = try reader.readUInt8("Operation")
        fragmentPreference = try reader.readUInt8("Fragment_Preference")
        let length = try reader.readUInt8("Advertising_Data_Length")
        data = try reader.readBytes(Int(length), "Advertising_Data")
    }
}

/// LE Set Extended Advertising Data (§7.8.54).
public struct LESetExtendedAdvertisingData: HCICommandParameters {
    public static var opcode: HCIOpcode { .leSetExtendedAdvertisingData }
    public var fragment: ExtendedAdvertisingDataFragment
    public init(_ fragment: ExtendedAdvertisingDataFragment) { self.fragment = fragment }
    public func encode(into writer: inout ByteWriter) { fragment.encode(into: &writer) }
    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        fragment = try ExtendedAdvertisingDataFragment(decoding: &reader)
    }
}

/// LE Set Extended Scan Response Data (§7.8.55).
public struct LESetExtendedScanResponseData: HCICommandParameters {
    public static var opcode: HCIOpcode { .leSetExtendedScanResponseData }
    public var fragment: ExtendedAdvertisingDataFragment
    public init(_ fragment: ExtendedAdvertisingDataFragment) { self.fragment = fragment }
    public func encode(into writer: inout ByteWriter) { fragment.encode(into: &writer) }
    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        fragment = try ExtendedAdvertisingDataFragment(decoding: &reader)
    }
}

/// LE Set Extended Advertising Enable (§7.8.56). Disabling with no sets disables all of them.
public struct LESetExtendedAdvertisingEnable: HCICommandParameters {
    public static var opcode: HCIOpcode { .leSetExtendedAdvertisingEnable }

    /// One set to enable or disable. Duration is in 10 ms units (0 = no limit).
    public struct AdvertisingSet: Hashable, Sendable {
        public var advertisingHandle: UInt8
        public var duration: UInt16
        public var maxExtendedAdvertisingEvents: UInt8
        public init(advertisingHandle: UInt8, duration: UInt16 = 0, maxExtendedAdvertisingEvents: UInt8 = 0) {
            self.advertisingHandle = advertisingHandle
            self.duration = duration
            self.maxExtendedAdvertisingEvents = maxExtendedAdvertisingEvents
        }
    }

    public var enable: Bool
    public var sets: [AdvertisingSet]

    public init(enable: Bool, sets: [AdvertisingSet]) {
        self.enable = enable
        self.sets = sets
    }

    public func encode(into writer: inout ByteWriter) {
        writer.append(UInt8(enable ? 1 : 0))
        writer.append(UInt8(truncatingIfNeeded: sets.count))
        for set in sets {
            writer.append(set.advertisingHandle)
            writer.append(set.duration)
            writer.append(set.maxExtendedAdvertisingEvents)
        }
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        enable = try reader.readUInt8("Enable") != 0
        let count = try reader.readUInt8("Num_Sets")
        try reader.require(Int(count) * 4, "Advertising_Handle")
        sets = []
        for _ in 0..<count {
            sets.append(AdvertisingSet(
                advertisingHandle: try reader.readUInt8("Advertising_Handle"),
                duration: try reader.readUInt16("Duration"),
                maxExtendedAdvertisingEvents: try reader.readUInt8("Max_Extended_Advertising_Events")))
        }
    }
}

/// LE Remove Advertising Set (§7.8.59).
public struct LERemoveAdvertisingSet: HCICommandParameters {
    public static var opcode: HCIOpcode { .leRemoveAdvertisingSet }
    public var advertisingHandle: UInt8
    public init(advertisingHandle: UInt8) { self.advertisingHandle = advertisingHandle }
    public func encode(into writer: inout ByteWriter) { writer.append(advertisingHandle) }
    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        advertisingHandle = try reader.readUInt8("Advertising_Handle")
    }
}
