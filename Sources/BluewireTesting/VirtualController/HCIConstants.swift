/// HCI command opcodes the virtual controller understands (Core Vol 4 Part E §7: OGF << 10 | OCF).
enum Op {
    // Link Control (OGF 0x01)
    static let disconnect: UInt16 = 0x0406
    static let readRemoteVersionInformation: UInt16 = 0x041D
    // Controller & Baseband (OGF 0x03)
    static let setEventMask: UInt16 = 0x0C01
    static let reset: UInt16 = 0x0C03
    // Informational (OGF 0x04)
    static let readLocalVersionInformation: UInt16 = 0x1001
    static let readLocalSupportedCommands: UInt16 = 0x1002
    static let readLocalSupportedFeatures: UInt16 = 0x1003
    static let readBufferSize: UInt16 = 0x1005
    static let readBDADDR: UInt16 = 0x1009
    // Status (OGF 0x05)
    static let readRSSI: UInt16 = 0x1405
    // LE Controller (OGF 0x08)
    static let leSetEventMask: UInt16 = 0x2001
    static let leReadBufferSize: UInt16 = 0x2002
    static let leReadLocalSupportedFeatures: UInt16 = 0x2003
    static let leSetRandomAddress: UInt16 = 0x2005
    static let leSetAdvertisingParameters: UInt16 = 0x2006
    static let leReadAdvertisingPhysicalChannelTxPower: UInt16 = 0x2007
    static let leSetAdvertisingData: UInt16 = 0x2008
    static let leSetScanResponseData: UInt16 = 0x2009
    static let leSetAdvertisingEnable: UInt16 = 0x200A
    static let leSetScanParameters: UInt16 = 0x200B
    static let leSetScanEnable: UInt16 = 0x200C
    static let leCreateConnection: UInt16 = 0x200D
    static let leCreateConnectionCancel: UInt16 = 0x200E
    static let leReadFilterAcceptListSize: UInt16 = 0x200F
    static let leClearFilterAcceptList: UInt16 = 0x2010
    static let leAddDeviceToFilterAcceptList: UInt16 = 0x2011
    static let leRemoveDeviceFromFilterAcceptList: UInt16 = 0x2012
    static let leConnectionUpdate: UInt16 = 0x2013
    static let leReadRemoteFeatures: UInt16 = 0x2016
    static let leEncrypt: UInt16 = 0x2017
    static let leRand: UInt16 = 0x2018
    static let leEnableEncryption: UInt16 = 0x2019
    static let leLongTermKeyRequestReply: UInt16 = 0x201A
    static let leLongTermKeyRequestNegativeReply: UInt16 = 0x201B
    static let leReadSupportedStates: UInt16 = 0x201C
    static let leSetDataLength: UInt16 = 0x2022
    static let leReadSuggestedDefaultDataLength: UInt16 = 0x2023
    static let leWriteSuggestedDefaultDataLength: UInt16 = 0x2024
    static let leReadLocalP256PublicKey: UInt16 = 0x2025
    static let leGenerateDHKey: UInt16 = 0x2026
    static let leAddDeviceToResolvingList: UInt16 = 0x2027
    static let leClearResolvingList: UInt16 = 0x2029
    static let leReadResolvingListSize: UInt16 = 0x202A
    static let leSetAddressResolutionEnable: UInt16 = 0x202D
    static let leReadMaximumDataLength: UInt16 = 0x202F
    static let leReadPHY: UInt16 = 0x2030
    static let leSetDefaultPHY: UInt16 = 0x2031
    static let leSetPHY: UInt16 = 0x2032
    static let leSetAdvertisingSetRandomAddress: UInt16 = 0x2035
    static let leSetExtendedAdvertisingParameters: UInt16 = 0x2036
    static let leSetExtendedAdvertisingData: UInt16 = 0x2037
    static let leSetExtendedScanResponseData: UInt16 = 0x2038
    static let leSetExtendedAdvertisingEnable: UInt16 = 0x2039
    static let leReadMaximumAdvertisingDataLength: UInt16 = 0x203A
    static let leReadNumberOfSupportedAdvertisingSets: UInt16 = 0x203B
    static let leRemoveAdvertisingSet: UInt16 = 0x203C
    static let leClearAdvertisingSets: UInt16 = 0x203D
    static let leSetExtendedScanParameters: UInt16 = 0x2041
    static let leSetExtendedScanEnable: UInt16 = 0x2042
    static let leExtendedCreateConnection: UInt16 = 0x2043
    static let leReadBufferSizeV2: UInt16 = 0x2060

    /// Commands answered with Command Status (the rest get Command Complete).
    static let answeredWithStatus: Set<UInt16> = [
        disconnect, readRemoteVersionInformation, leCreateConnection, leConnectionUpdate,
        leReadRemoteFeatures, leSetPHY, leExtendedCreateConnection, leEnableEncryption,
        leReadLocalP256PublicKey, leGenerateDHKey,
    ]

    /// Legacy advertising, scanning and initiating commands (Core Vol 4 Part E §3.1.1): once the Host has
    /// used one of these since reset, the extended ones are disallowed, and the other way round.
    static let legacyAdvertisingCommands: Set<UInt16> = [
        leSetAdvertisingParameters, leReadAdvertisingPhysicalChannelTxPower, leSetAdvertisingData,
        leSetScanResponseData, leSetAdvertisingEnable, leSetScanParameters, leSetScanEnable, leCreateConnection,
    ]
    static let extendedAdvertisingCommands: Set<UInt16> = [
        leSetAdvertisingSetRandomAddress, leSetExtendedAdvertisingParameters, leSetExtendedAdvertisingData,
        leSetExtendedScanResponseData, leSetExtendedAdvertisingEnable, leReadMaximumAdvertisingDataLength,
        leReadNumberOfSupportedAdvertisingSets, leRemoveAdvertisingSet, leClearAdvertisingSets,
        leSetExtendedScanParameters, leSetExtendedScanEnable, leExtendedCreateConnection,
    ]
}

/// HCI error codes used by the virtual controller (Core Vol 1 Part F §1.3).
enum Status {
    static let success: UInt8 = 0x00
    static let unknownCommand: UInt8 = 0x01
    static let unspecifiedError: UInt8 = 0x1F
    static let unknownConnectionIdentifier: UInt8 = 0x02
    static let pinOrKeyMissing: UInt8 = 0x06
    static let memoryCapacityExceeded: UInt8 = 0x07
    static let connectionTimeout: UInt8 = 0x08
    static let connectionAlreadyExists: UInt8 = 0x0B
    static let commandDisallowed: UInt8 = 0x0C
    static let unsupportedFeature: UInt8 = 0x11
    static let invalidParameters: UInt8 = 0x12
    static let remoteUserTerminated: UInt8 = 0x13
    static let localHostTerminated: UInt8 = 0x16
    static let unsupportedRemoteFeature: UInt8 = 0x1A
    static let advertisingTimeout: UInt8 = 0x3C
    static let unknownAdvertisingIdentifier: UInt8 = 0x42
    static let limitReached: UInt8 = 0x43
}

/// HCI event codes (Core Vol 4 Part E §7.7).
enum EventCode {
    static let disconnectionComplete: UInt8 = 0x05
    static let encryptionChange: UInt8 = 0x08
    static let readRemoteVersionInformationComplete: UInt8 = 0x0C
    static let commandComplete: UInt8 = 0x0E
    static let commandStatus: UInt8 = 0x0F
    static let hardwareError: UInt8 = 0x10
    static let numberOfCompletedPackets: UInt8 = 0x13
    static let dataBufferOverflow: UInt8 = 0x1A
    static let encryptionKeyRefreshComplete: UInt8 = 0x30
    static let leMeta: UInt8 = 0x3E
}

/// LE Meta event subevent codes (Core Vol 4 Part E §7.7.65).
enum LESubevent {
    static let connectionComplete: UInt8 = 0x01
    static let advertisingReport: UInt8 = 0x02
    static let connectionUpdateComplete: UInt8 = 0x03
    static let readRemoteFeaturesComplete: UInt8 = 0x04
    static let longTermKeyRequest: UInt8 = 0x05
    static let dataLengthChange: UInt8 = 0x07
    static let readLocalP256PublicKeyComplete: UInt8 = 0x08
    static let generateDHKeyComplete: UInt8 = 0x09
    static let enhancedConnectionComplete: UInt8 = 0x0A
    static let phyUpdateComplete: UInt8 = 0x0C
    static let extendedAdvertisingReport: UInt8 = 0x0D
    static let scanTimeout: UInt8 = 0x11
    static let advertisingSetTerminated: UInt8 = 0x12
    static let scanRequestReceived: UInt8 = 0x13
    static let channelSelectionAlgorithm: UInt8 = 0x14
}

/// Bluetooth time units used by HCI parameters, in microseconds.
enum Units {
    /// Advertising and scan intervals and windows: 0.625 ms.
    static let advertisingSlot: Int64 = 625
    /// Connection intervals: 1.25 ms.
    static let connectionInterval: Int64 = 1_250
    /// Supervision timeouts, advertising and scan durations: 10 ms.
    static let tenMilliseconds: Int64 = 10_000
    /// Extended scan periods: 1.28 s.
    static let scanPeriod: Int64 = 1_280_000
}

/// PHY values in HCI events and LE Read PHY (Core Vol 4 Part E §7.8.47).
enum PHY {
    static let le1M: UInt8 = 0x01
    static let le2M: UInt8 = 0x02
    static let leCoded: UInt8 = 0x03
}
