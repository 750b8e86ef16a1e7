import BluewireCore

/// The typed return parameters of a Command Complete event (Core Vol 4 Part E §7.7.14), one type
/// per command table in §7. Every command the stack sends returns Status first.
public protocol CommandReturnParameters: Hashable, Sendable {
    init(decoding reader: inout ByteReader) throws(DecodeError)
}

/// Return parameters that are only a Status (Reset, Set Event Mask, LE Set Scan Enable, …).
public struct StatusReturnParameters: CommandReturnParameters {
    public var status: HCIStatus
    public init(status: HCIStatus) { self.status = status }
    @inlinable public init(decoding reader: inout ByteReader) throws(DecodeError) {
        status = HCIStatus(try reader.readUInt8("Status"))
    }
}

/// Read Local Version Information (§7.4.1). HCI_Version 0x09 is Core 5.0, 0x0D is 5.4.
public struct LocalVersionInformation: CommandReturnParameters {
    public var status: HCIStatus
    public var hciVersion: UInt8
    public var hciSubversion: UInt16
    public var lmpVersion: UInt8
    /// Company identifier (Assigned Numbers); bumble reports 0xFFFF.
    public var companyIdentifier: UInt16
    public var lmpSubversion: UInt16

    public init(status: HCIStatus = .success, hciVersion: UInt8, hciSubversion: UInt16, lmpVersion: UInt8, companyIdentifier: UInt16, lmpSubversion: UInt16) {
        self.status = status
        self.hciVersion = hciVersion
        self.hciSubversion = hciSubversion
        self.lmpVersion = lmpVersion
        self.companyIdentifier = companyIdentifier
        self.lmpSubversion = lmpSubversion
    }

    @inlinable public init(decoding reader: inout ByteReader) throws(DecodeError) {
        status = HCIStatus(try reader.readUInt8("Status"))
        hciVersion = try reader.readUInt8("HCI_Version")
        hciSubversion = try reader.readUInt16("HCI_Subversion")
        lmpVersion = try reader.readUInt8("LMP_Version")
        companyIdentifier = try reader.readUInt16("Company_Identifier")
        lmpSubversion = try reader.readUInt16("LMP_Subversion")
    }
}

/// Read Local Supported Features (§7.4.3): the 8-octet LMP feature mask (bit 38 "LE Supported (Controller)").
public struct LocalSupportedFeatures: CommandReturnParameters {
    public var status: HCIStatus
    public var lmpFeatures: UInt64
    public init(status: HCIStatus = .success, lmpFeatures: UInt64) {
        self.status = status
        self.lmpFeatures = lmpFeatures
    }
    @inlinable public init(decoding reader: inout ByteReader) throws(DecodeError) {
        status = HCIStatus(try reader.readUInt8("Status"))
        lmpFeatures = try reader.readUInt64("LMP_Features")
    }
}

/// Read BD_ADDR (§7.4.6): the controller's public address (00:00:00:00:00:00 when it has none).
public struct ReadBDADDRReturn: CommandReturnParameters {
    public var status: HCIStatus
    public var address: BluetoothAddress
    public init(status: HCIStatus = .success, address: BluetoothAddress) {
        self.status = status
        self.address = address
    }
    @inlinable public init(decoding reader: inout ByteReader) throws(DecodeError) {
        status = HCIStatus(try reader.readUInt8("Status"))
        address = try reader.readAddress(type: .public, "BD_ADDR")
    }
}

/// Read Buffer Size (§7.4.5): the shared ACL buffers, used for LE when LE Read Buffer Size reports 0.
public struct BufferSize: CommandReturnParameters {
    public var status: HCIStatus
    public var aclDataPacketLength: UInt16
    public var synchronousDataPacketLength: UInt8
    public var totalNumACLDataPackets: UInt16
    public var totalNumSynchronousDataPackets: UInt16

    public init(status: HCIStatus = .success, aclDataPacketLength: UInt16, synchronousDataPacketLength: UInt8 = 0, totalNumACLDataPackets: UInt16, totalNumSynchronousDataPackets: UInt16 = 0) {
        self.status = status
        self.aclDataPacketLength = aclDataPacketLength
        self.synchronousDataPacketLength = synchronousDataPacketLength
        self.totalNumACLDataPackets = totalNumACLDataPackets
        self.totalNumSynchronousDataPackets = totalNumSynchronousDataPackets
    }

    @inlinable public init(decoding reader: inout ByteReader) throws(DecodeError) {
        status = HCIStatus(try reader.readUInt8("Status"))
        aclDataPacketLength = try reader.readUInt16("ACL_Data_Packet_Length")
        synchronousDataPacketLength = try reader.readUInt8("Synchronous_Data_Packet_Length")
        totalNumACLDataPackets = try reader.readUInt16("Total_Num_ACL_Data_Packets")
        totalNumSynchronousDataPackets = try reader.readUInt16("Total_Num_Synchronous_Data_Packets")
    }
}

/// LE Read Buffer Size [v1] (§7.8.2) and, with the ISO fields, [v2]. A zero LE ACL length means
/// LE shares the BR/EDR buffers of Read Buffer Size.
public struct LEBufferSize: CommandReturnParameters {
    public var status: HCIStatus
    public var leACLDataPacketLength: UInt16
    public var totalNumLEACLDataPackets: UInt8
    /// v2 only.
    public var isoDataPacketLength: UInt16?
    /// v2 only.
    public var totalNumISODataPackets: UInt8?

    public init(status: HCIStatus = .success, leACLDataPacketLength: UInt16, totalNumLEACLDataPackets: UInt8, isoDataPacketLength: UInt16? = nil, totalNumISODataPackets: UInt8? = nil) {
        self.status = status
        self.leACLDataPacketLength = leACLDataPacketLength
        self.totalNumLEACLDataPackets = totalNumLEACLDataPackets
        self.isoDataPacketLength = isoDataPacketLength
        self.totalNumISODataPackets = totalNumISODataPackets
    }

    /// Decodes v1, and v2 when the ISO fields are present.
    @inlinable public init(decoding reader: inout ByteReader) throws(DecodeError) {
        status = HCIStatus(try reader.readUInt8("Status"))
        leACLDataPacketLength = try reader.readUInt16("LE_ACL_Data_Packet_Length")
        totalNumLEACLDataPackets = try reader.readUInt8("Total_Num_LE_ACL_Data_Packets")
        if reader.isAtEnd {
            isoDataPacketLength = nil
            totalNumISODataPackets = nil
        } else {
            isoDataPacketLength = try reader.readUInt16("ISO_Data_Packet_Length")
            totalNumISODataPackets = try reader.readUInt8("Total_Num_ISO_Data_Packets")
        }
    }
}

/// LE Read Local Supported Features (§7.8.3).
public struct LELocalSupportedFeatures: CommandReturnParameters {
    public var status: HCIStatus
    public var leFeatures: LEFeatures
    public init(status: HCIStatus = .success, leFeatures: LEFeatures) {
        self.status = status
        self.leFeatures = leFeatures
    }
    @inlinable public init(decoding reader: inout ByteReader) throws(DecodeError) {
        status = HCIStatus(try reader.readUInt8("Status"))
        leFeatures = LEFeatures(rawValue: try reader.readUInt64("LE_Features"))
    }
}

/// LE Read Maximum Advertising Data Length (§7.8.57): the most advertising or scan response data one
/// set may hold (31…1650).
public struct LEMaximumAdvertisingDataLength: CommandReturnParameters {
    public var status: HCIStatus
    public var maxAdvertisingDataLength: UInt16
    public init(status: HCIStatus = .success, maxAdvertisingDataLength: UInt16) {
        self.status = status
        self.maxAdvertisingDataLength = maxAdvertisingDataLength
    }
    @inlinable public init(decoding reader: inout ByteReader) throws(DecodeError) {
        status = HCIStatus(try reader.readUInt8("Status"))
        maxAdvertisingDataLength = try reader.readUInt16("Max_Advertising_Data_Length")
    }
}

/// LE Read Number of Supported Advertising Sets (§7.8.58).
public struct LENumberOfSupportedAdvertisingSets: CommandReturnParameters {
    public var status: HCIStatus
    public var numSupportedAdvertisingSets: UInt8
    public init(status: HCIStatus = .success, numSupportedAdvertisingSets: UInt8) {
        self.status = status
        self.numSupportedAdvertisingSets = numSupportedAdvertisingSets
    }
    @inlinable public init(decoding reader: inout ByteReader) throws(DecodeError) {
        status = HCIStatus(try reader.readUInt8("Status"))
        numSupportedAdvertisingSets = try reader.readUInt8("Num_Supported_Advertising_Sets")
    }
}

/// LE Read Suggested Default Data Length (§7.8.34).
public struct LESuggestedDefaultDataLength: CommandReturnParameters {
    public var status: HCIStatus
    public var suggestedMaxTxOctets: UInt16
    public var suggestedMaxTxTime: UInt16
    public init(status: HCIStatus = .success, suggestedMaxTxOctets: UInt16, suggestedMaxTxTime: UInt16) {
        self.status = status
        self.suggestedMaxTxOctets = suggestedMaxTxOctets
        self.suggestedMaxTxTime = suggestedMaxTxTime
    }
    @inlinable public init(decoding reader: inout ByteReader) throws(DecodeError) {
        status = HCIStatus(try reader.readUInt8("Status"))
        suggestedMaxTxOctets = try reader.readUInt16("Suggested_Max_TX_Octets")
        suggestedMaxTxTime = try reader.readUInt16("Suggested_Max_TX_Time")
    }
}

/// LE Read PHY (§7.8.47): 0x01 LE 1M, 0x02 LE 2M, 0x03 LE Coded.
public struct LEReadPHYReturn: CommandReturnParameters {
    public var status: HCIStatus
    public var connectionHandle: UInt16
    public var txPHY: UInt8
    public var rxPHY: UInt8
    public init(status: HCIStatus = .success, connectionHandle: UInt16, txPHY: UInt8, rxPHY: UInt8) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.txPHY = txPHY
        self.rxPHY = rxPHY
    }
    @inlinable public init(decoding reader: inout ByteReader) throws(DecodeError) {
        status = HCIStatus(try reader.readUInt8("Status"))
        connectionHandle = try reader.readUInt16("Connection_Handle") & 0x0FFF
        txPHY = try reader.readUInt8("TX_PHY")
        rxPHY = try reader.readUInt8("RX_PHY")
    }
}

/// Return parameters of LE Set Data Length (§7.8.33) and other per-connection commands:
/// Status and Connection_Handle.
public struct ConnectionHandleReturnParameters: CommandReturnParameters {
    public var status: HCIStatus
    public var connectionHandle: UInt16
    public init(status: HCIStatus = .success, connectionHandle: UInt16) {
        self.status = status
        self.connectionHandle = connectionHandle
    }
    @inlinable public init(decoding reader: inout ByteReader) throws(DecodeError) {
        status = HCIStatus(try reader.readUInt8("Status"))
        connectionHandle = try reader.readUInt16("Connection_Handle") & 0x0FFF
    }
}

/// LE Set Extended Advertising Parameters (§7.8.53): the TX power the controller chose, in dBm.
public struct LESetExtendedAdvertisingParametersReturn: CommandReturnParameters {
    public var status: HCIStatus
    public var selectedTxPower: Int8
    public init(status: HCIStatus = .success, selectedTxPower: Int8) {
        self.status = status
        self.selectedTxPower = selectedTxPower
    }
    @inlinable public init(decoding reader: inout ByteReader) throws(DecodeError) {
        status = HCIStatus(try reader.readUInt8("Status"))
        selectedTxPower = try reader.readInt8("Selected_TX_Power")
    }
}
