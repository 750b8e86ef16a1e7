import BluewireCore

/// Read Local Supported Commands (Core Vol 4 Part E §7.4.2): a 64-octet bitmap, one bit per command
/// (the octet/bit table is §6.27). The host must check it before using optional commands such as
/// LE Read Buffer Size [v2] or the extended advertising set.
///
/// Stored as eight words so that it can live in `ControllerInfo` without an allocation.
public struct LocalSupportedCommands: CommandReturnParameters {
    public var status: HCIStatus
    /// Octets 0…63, little-endian, eight per word.
    public var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)

    public init(status: HCIStatus = .success) {
        self.status = status
        words = (0, 0, 0, 0, 0, 0, 0, 0)
    }

    /// Builds a bitmap from octets (for tests and virtual controllers); extra octets are ignored.
    public init<C: Collection>(status: HCIStatus = .success, octets: C) where C.Element == UInt8 {
        self.init(status: status)
        for (i, octet) in octets.prefix(64).enumerated() { setOctet(i, octet) }
    }

    @inlinable public init(decoding reader: inout ByteReader) throws(DecodeError) {
        status = HCIStatus(try reader.readUInt8("Status"))
        words = (
            try reader.readUInt64("Supported_Commands"), try reader.readUInt64("Supported_Commands"),
            try reader.readUInt64("Supported_Commands"), try reader.readUInt64("Supported_Commands"),
            try reader.readUInt64("Supported_Commands"), try reader.readUInt64("Supported_Commands"),
            try reader.readUInt64("Supported_Commands"), try reader.readUInt64("Supported_Commands"))
    }

    @inlinable
    func word(_ index: Int) -> UInt64 {
        switch index {
        case 0: words.0
        case 1: words.1
        case 2: words.2
        case 3: words.3
        case 4: words.4
        case 5: words.5
        case 6: words.6
        case 7: words.7
        default: 0
        }
    }

    mutating func setOctet(_ octet: Int, _ value: UInt8) {
        let shift = UInt64((octet % 8) * 8)
        let mask: UInt64 = 0xFF << shift
        func set(_ w: UInt64) -> UInt64 { (w & ~mask) | UInt64(value) << shift }
        switch octet / 8 {
        case 0: words.0 = set(words.0)
        case 1: words.1 = set(words.1)
        case 2: words.2 = set(words.2)
        case 3: words.3 = set(words.3)
        case 4: words.4 = set(words.4)
        case 5: words.5 = set(words.5)
        case 6: words.6 = set(words.6)
        case 7: words.7 = set(words.7)
        default: break
        }
    }

    /// Octet `index` (0…63) of the bitmap.
    @inlinable
    public func octet(_ index: Int) -> UInt8 {
        guard index >= 0 && index < 64 else { return 0 }
        return UInt8(truncatingIfNeeded: word(index / 8) >> UInt64((index % 8) * 8))
    }

    /// Whether the bit for octet `octet`, bit `bit` is set (§6.27 numbering).
    @inlinable
    public func supports(octet: Int, bit: Int) -> Bool {
        guard bit >= 0 && bit < 8 else { return false }
        return self.octet(octet) & (1 << UInt8(bit)) != 0
    }

    /// Whether the controller lists this command; nil when the opcode has no entry in this table.
    public func supports(_ opcode: HCIOpcode) -> Bool? {
        guard let position = LocalSupportedCommands.bitPosition(of: opcode) else { return nil }
        return supports(octet: position.octet, bit: position.bit)
    }

    /// The octet and bit of a command in the Supported_Commands table (§6.27), for the commands
    /// the stack uses.
    public static func bitPosition(of opcode: HCIOpcode) -> (octet: Int, bit: Int)? {
        switch opcode {
        case .disconnect: (0, 5)
        case .readRemoteVersionInformation: (2, 7)
        case .setEventMask: (5, 6)
        case .reset: (5, 7)
        case .readLocalVersionInformation: (14, 3)
        case .readLocalSupportedFeatures: (14, 5)
        case .readBufferSize: (14, 7)
        case .readBDADDR: (15, 1)
        case .leSetEventMask: (25, 0)
        case .leReadBufferSize: (25, 1)
        case .leReadLocalSupportedFeatures: (25, 2)
        case .leSetRandomAddress: (25, 4)
        case .leSetAdvertisingParameters: (25, 5)
        case .leSetAdvertisingData: (25, 7)
        case .leSetScanResponseData: (26, 0)
        case .leSetAdvertisingEnable: (26, 1)
        case .leSetScanParameters: (26, 2)
        case .leSetScanEnable: (26, 3)
        case .leCreateConnection: (26, 4)
        case .leCreateConnectionCancel: (26, 5)
        case .leConnectionUpdate: (27, 2)
        case .leReadRemoteFeatures: (27, 5)
        case .leEncrypt: (27, 6)
        case .leRand: (27, 7)
        case .leEnableEncryption: (28, 0)
        case .leLongTermKeyRequestReply: (28, 1)
        case .leLongTermKeyRequestNegativeReply: (28, 2)
        case .leSetDataLength: (33, 6)
        case .leReadSuggestedDefaultDataLength: (33, 7)
        case .leWriteSuggestedDefaultDataLength: (34, 0)
        case .leReadLocalP256PublicKey: (34, 1)
        case .leGenerateDHKey: (34, 2)
        case .leAddDeviceToResolvingList: (34, 3)
        case .leClearResolvingList: (34, 5)
        case .leReadResolvingListSize: (34, 6)
        case .leSetAddressResolutionEnable: (35, 1)
        case .leReadMaximumDataLength: (35, 3)
        case .leReadPHY: (35, 4)
        case .leSetDefaultPHY: (35, 5)
        case .leSetPHY: (35, 6)
        case .leSetAdvertisingSetRandomAddress: (36, 1)
        case .leSetExtendedAdvertisingParameters: (36, 2)
        case .leSetExtendedAdvertisingData: (36, 3)
        case .leSetExtendedScanResponseData: (36, 4)
        case .leSetExtendedAdvertisingEnable: (36, 5)
        case .leReadMaximumAdvertisingDataLength: (36, 6)
        case .leReadNumberOfSupportedAdvertisingSets: (36, 7)
        case .leRemoveAdvertisingSet: (37, 0)
        case .leClearAdvertisingSets: (37, 1)
        case .leSetExtendedScanParameters: (37, 5)
        case .leSetExtendedScanEnable: (37, 6)
        case .leExtendedCreateConnection: (37, 7)
        case .leReadBufferSizeV2: (41, 5)
        default: nil
        }
    }

    public static func == (lhs: LocalSupportedCommands, rhs: LocalSupportedCommands) -> Bool {
        guard lhs.status == rhs.status else { return false }
        for i in 0..<8 where lhs.word(i) != rhs.word(i) { return false }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(status)
        for i in 0..<8 { hasher.combine(word(i)) }
    }
}

/// The LE feature mask (Core Vol 6 Part B §4.6), from LE Read Local Supported Features or
/// LE Read Remote Features Complete.
public struct LEFeatures: OptionSet, Hashable, Sendable {
    public var rawValue: UInt64
    @inlinable public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let leEncryption = LEFeatures(rawValue: 1 << 0)
    public static let connectionParametersRequest = LEFeatures(rawValue: 1 << 1)
    public static let extendedRejectIndication = LEFeatures(rawValue: 1 << 2)
    public static let peripheralInitiatedFeaturesExchange = LEFeatures(rawValue: 1 << 3)
    public static let lePing = LEFeatures(rawValue: 1 << 4)
    public static let leDataPacketLengthExtension = LEFeatures(rawValue: 1 << 5)
    public static let llPrivacy = LEFeatures(rawValue: 1 << 6)
    public static let extendedScanningFilterPolicies = LEFeatures(rawValue: 1 << 7)
    public static let le2MPHY = LEFeatures(rawValue: 1 << 8)
    public static let stableModulationIndexTransmitter = LEFeatures(rawValue: 1 << 9)
    public static let stableModulationIndexReceiver = LEFeatures(rawValue: 1 << 10)
    public static let leCodedPHY = LEFeatures(rawValue: 1 << 11)
    public static let leExtendedAdvertising = LEFeatures(rawValue: 1 << 12)
    public static let lePeriodicAdvertising = LEFeatures(rawValue: 1 << 13)
    public static let channelSelectionAlgorithm2 = LEFeatures(rawValue: 1 << 14)
    public static let lePowerClass1 = LEFeatures(rawValue: 1 << 15)
    public static let minimumNumberOfUsedChannels = LEFeatures(rawValue: 1 << 16)
    public static let connectedIsochronousStreamCentral = LEFeatures(rawValue: 1 << 28)
    public static let connectedIsochronousStreamPeripheral = LEFeatures(rawValue: 1 << 29)
    public static let isochronousBroadcaster = LEFeatures(rawValue: 1 << 30)
    public static let synchronizedReceiver = LEFeatures(rawValue: 1 << 31)
}
