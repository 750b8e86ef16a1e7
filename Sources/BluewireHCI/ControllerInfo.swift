import BluewireCore

/// What bring-up learned about the controller: versions, features, supported commands, LE buffers
/// and the address the stack uses. Later layers choose commands from it (extended or legacy
/// scanning and advertising, data length, PHY) instead of trying and failing.
public struct ControllerInfo: Hashable, Sendable {
    public var version: LocalVersionInformation
    public var lmpFeatures: UInt64
    public var supportedCommands: LocalSupportedCommands
    public var leFeatures: LEFeatures
    /// Largest ACL payload per packet towards the controller (LE buffers, or the shared
    /// BR/EDR ones when LE Read Buffer Size reported 0).
    public var leACLDataPacketLength: UInt16
    /// How many ACL packets the controller can buffer: the host's initial ACL credits.
    public var totalNumLEACLDataPackets: UInt16
    /// From LE Read Buffer Size [v2] only.
    public var isoDataPacketLength: UInt16?
    public var totalNumISODataPackets: UInt8?
    /// From Read BD_ADDR; nil if the controller has none (all zeros) or did not answer.
    public var publicAddress: BluetoothAddress?
    /// The random static address set with LE Set Random Address (own address type 0x01).
    public var randomAddress: BluetoothAddress
    /// From LE Read Maximum Advertising Data Length; 31 without extended advertising.
    public var maxAdvertisingDataLength: UInt16
    /// From LE Read Number of Supported Advertising Sets; 1 without extended advertising.
    public var numberOfAdvertisingSets: UInt8

    public init(
        version: LocalVersionInformation, lmpFeatures: UInt64 = 0, supportedCommands: LocalSupportedCommands,
        leFeatures: LEFeatures, leACLDataPacketLength: UInt16, totalNumLEACLDataPackets: UInt16,
        isoDataPacketLength: UInt16? = nil, totalNumISODataPackets: UInt8? = nil, publicAddress: BluetoothAddress? = nil,
        randomAddress: BluetoothAddress, maxAdvertisingDataLength: UInt16 = 31, numberOfAdvertisingSets: UInt8 = 1
    ) {
        self.version = version
        self.lmpFeatures = lmpFeatures
        self.supportedCommands = supportedCommands
        self.leFeatures = leFeatures
        self.leACLDataPacketLength = leACLDataPacketLength
        self.totalNumLEACLDataPackets = totalNumLEACLDataPackets
        self.isoDataPacketLength = isoDataPacketLength
        self.totalNumISODataPackets = totalNumISODataPackets
        self.publicAddress = publicAddress
        self.randomAddress = randomAddress
        self.maxAdvertisingDataLength = maxAdvertisingDataLength
        self.numberOfAdvertisingSets = numberOfAdvertisingSets
    }

    /// Company identifier of the controller's manufacturer (0xFFFF for bumble).
    public var manufacturer: UInt16 { version.companyIdentifier }

    /// The LE Extended Advertising feature and the commands to use it.
    public var supportsExtendedAdvertising: Bool {
        leFeatures.contains(.leExtendedAdvertising)
            && supportedCommands.supports(.leSetExtendedAdvertisingParameters) == true
            && supportedCommands.supports(.leSetExtendedAdvertisingEnable) == true
    }

    /// Extended scanning uses the same feature bit (Core Vol 6 Part B §4.6.12) and its own commands.
    public var supportsExtendedScanning: Bool {
        leFeatures.contains(.leExtendedAdvertising)
            && supportedCommands.supports(.leSetExtendedScanParameters) == true
            && supportedCommands.supports(.leSetExtendedScanEnable) == true
    }

    public var supportsExtendedCreateConnection: Bool {
        leFeatures.contains(.leExtendedAdvertising) && supportedCommands.supports(.leExtendedCreateConnection) == true
    }

    /// The LE resolving list (Core Vol 4 Part E §7.8.38–44): the commands to fill it, size it and turn
    /// address resolution on (Supported_Commands octet 34 bits 3, 5, 6 and octet 35 bit 1, §6.27).
    public var supportsResolvingList: Bool {
        supportedCommands.supports(.leAddDeviceToResolvingList) == true
            && supportedCommands.supports(.leClearResolvingList) == true
            && supportedCommands.supports(.leReadResolvingListSize) == true
            && supportedCommands.supports(.leSetAddressResolutionEnable) == true
    }

    public var supports2MPHY: Bool { leFeatures.contains(.le2MPHY) }
    public var supportsCodedPHY: Bool { leFeatures.contains(.leCodedPHY) }
    /// LE Data Packet Length Extension (payloads up to 251 octets) and LE Set Data Length.
    public var supportsDataLengthExtension: Bool {
        leFeatures.contains(.leDataPacketLengthExtension) && supportedCommands.supports(.leSetDataLength) != false
    }
}
