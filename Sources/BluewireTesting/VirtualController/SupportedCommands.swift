/// The Supported_Commands bit map of Read Local Supported Commands (Core Vol 4 Part E §6.27): which
/// octet and bit stand for each command the virtual controller implements.
enum SupportedCommands {
    static let positions: [UInt16: (octet: Int, bit: Int)] = [
        Op.disconnect: (0, 5),
        Op.readRemoteVersionInformation: (2, 7),
        Op.setEventMask: (5, 6),
        Op.reset: (5, 7),
        Op.readLocalVersionInformation: (14, 3),
        Op.readLocalSupportedFeatures: (14, 5),
        Op.readBufferSize: (14, 7),
        Op.readBDADDR: (15, 1),
        Op.readRSSI: (15, 5),
        Op.leSetEventMask: (25, 0),
        Op.leReadBufferSize: (25, 1),
        Op.leReadLocalSupportedFeatures: (25, 2),
        Op.leSetRandomAddress: (25, 4),
        Op.leSetAdvertisingParameters: (25, 5),
        Op.leReadAdvertisingPhysicalChannelTxPower: (25, 6),
        Op.leSetAdvertisingData: (25, 7),
        Op.leSetScanResponseData: (26, 0),
        Op.leSetAdvertisingEnable: (26, 1),
        Op.leSetScanParameters: (26, 2),
        Op.leSetScanEnable: (26, 3),
        Op.leCreateConnection: (26, 4),
        Op.leCreateConnectionCancel: (26, 5),
        Op.leReadFilterAcceptListSize: (26, 6),
        Op.leClearFilterAcceptList: (26, 7),
        Op.leAddDeviceToFilterAcceptList: (27, 0),
        Op.leRemoveDeviceFromFilterAcceptList: (27, 1),
        Op.leConnectionUpdate: (27, 2),
        Op.leReadRemoteFeatures: (27, 5),
        Op.leEncrypt: (27, 6),
        Op.leRand: (27, 7),
        Op.leEnableEncryption: (28, 0),
        Op.leLongTermKeyRequestReply: (28, 1),
        Op.leLongTermKeyRequestNegativeReply: (28, 2),
        Op.leReadSupportedStates: (28, 3),
        Op.leSetDataLength: (33, 6),
        Op.leReadSuggestedDefaultDataLength: (33, 7),
        Op.leWriteSuggestedDefaultDataLength: (34, 0),
        Op.leReadLocalP256PublicKey: (34, 1),
        Op.leGenerateDHKey: (34, 2),
        Op.leAddDeviceToResolvingList: (34, 3),
        Op.leClearResolvingList: (34, 5),
        Op.leReadResolvingListSize: (34, 6),
        Op.leSetAddressResolutionEnable: (35, 1),
        Op.leReadMaximumDataLength: (35, 3),
        Op.leReadPHY: (35, 4),
        Op.leSetDefaultPHY: (35, 5),
        Op.leSetPHY: (35, 6),
        Op.leSetAdvertisingSetRandomAddress: (36, 1),
        Op.leSetExtendedAdvertisingParameters: (36, 2),
        Op.leSetExtendedAdvertisingData: (36, 3),
        Op.leSetExtendedScanResponseData: (36, 4),
        Op.leSetExtendedAdvertisingEnable: (36, 5),
        Op.leReadMaximumAdvertisingDataLength: (36, 6),
        Op.leReadNumberOfSupportedAdvertisingSets: (36, 7),
        Op.leRemoveAdvertisingSet: (37, 0),
        Op.leClearAdvertisingSets: (37, 1),
        Op.leSetExtendedScanParameters: (37, 5),
        Op.leSetExtendedScanEnable: (37, 6),
        Op.leExtendedCreateConnection: (37, 7),
        Op.leReadBufferSizeV2: (41, 5),
    ]

    static let dataLengthCommands: Set<UInt16> = [
        Op.leSetDataLength, Op.leReadSuggestedDefaultDataLength, Op.leWriteSuggestedDefaultDataLength,
        Op.leReadMaximumDataLength,
    ]
    static let phyCommands: Set<UInt16> = [Op.leReadPHY, Op.leSetDefaultPHY, Op.leSetPHY]
    /// The resolving list (Core Vol 4 Part E §7.8.38–44), which the LL Privacy feature stands for.
    static let resolvingListCommands: Set<UInt16> = [
        Op.leAddDeviceToResolvingList, Op.leClearResolvingList, Op.leReadResolvingListSize, Op.leSetAddressResolutionEnable,
    ]

    /// The commands a controller with these LE features answers: the extended advertising, data length and
    /// PHY and resolving list commands only when the matching feature is there, so the bit map never claims more than it does.
    static func opcodes(for features: VirtualController.LEFeatures, crypto: Bool = true) -> Set<UInt16> {
        var opcodes = Set(positions.keys)
        if !crypto { opcodes.subtract([Op.leEncrypt, Op.leReadLocalP256PublicKey, Op.leGenerateDHKey]) }
        opcodes.insert(Op.readLocalSupportedCommands)
        if !features.contains(.extendedAdvertising) { opcodes.subtract(Op.extendedAdvertisingCommands) }
        if !features.contains(.dataPacketLengthExtension) { opcodes.subtract(dataLengthCommands) }
        if features.isDisjoint(with: [.le2MPHY, .leCodedPHY]) { opcodes.subtract(phyCommands) }
        if !features.contains(.llPrivacy) { opcodes.subtract(resolvingListCommands) }
        return opcodes
    }

    /// The 64-octet Supported_Commands field for a set of opcodes.
    static func bitmap(for opcodes: Set<UInt16>) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 64)
        for opcode in opcodes {
            guard let position = positions[opcode] else { continue }
            bytes[position.octet] |= 1 << UInt8(position.bit)
        }
        return bytes
    }
}
