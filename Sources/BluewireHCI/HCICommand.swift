import BluewireCore

/// An HCI command the stack sends, with typed parameters (Core Vol 4 Part E §7).
///
/// `packet` encodes it as an HCI command packet (opcode, parameter length, parameters; §5.4.1).
/// `init(decoding:)` reads a command packet back, for showing captures; opcodes without a typed
/// case (vendor commands, BR/EDR) become `.raw` rather than an error.
///
/// `indirect`: a payload lives in its own box, so a command is one reference wide and copying or
/// destroying one is a retain or release. Inline, every copy switched over the largest payloads;
/// those copies of a command held in procedures and the command flow cost firmware images about
/// 4.7 KB of flash. Commands are a handful per connection, not per packet: the boxes cost nothing
/// that matters on a host.
public indirect enum HCICommand: Hashable, Sendable {
    case reset
    case readLocalVersionInformation
    case readLocalSupportedCommands
    case readLocalSupportedFeatures
    case readBDADDR
    case readBufferSize
    case setEventMask(EventMask)
    case leSetEventMask(EventMask)
    case leReadBufferSize
    case leReadBufferSizeV2
    case leReadLocalSupportedFeatures
    case leSetRandomAddress(LESetRandomAddress)
    case leSetScanParameters(LESetScanParameters)
    case leSetScanEnable(LESetScanEnable)
    case leSetExtendedScanParameters(LESetExtendedScanParameters)
    case leSetExtendedScanEnable(LESetExtendedScanEnable)
    case leSetAdvertisingParameters(LESetAdvertisingParameters)
    case leSetAdvertisingData(LESetAdvertisingData)
    case leSetScanResponseData(LESetScanResponseData)
    case leSetAdvertisingEnable(LESetAdvertisingEnable)
    case leSetExtendedAdvertisingParameters(LESetExtendedAdvertisingParameters)
    case leSetExtendedAdvertisingData(LESetExtendedAdvertisingData)
    case leSetExtendedScanResponseData(LESetExtendedScanResponseData)
    case leSetExtendedAdvertisingEnable(LESetExtendedAdvertisingEnable)
    case leRemoveAdvertisingSet(LERemoveAdvertisingSet)
    case leClearAdvertisingSets
    case leReadMaximumAdvertisingDataLength
    case leReadNumberOfSupportedAdvertisingSets
    case leCreateConnection(LECreateConnection)
    case leExtendedCreateConnection(LEExtendedCreateConnection)
    case leCreateConnectionCancel
    case disconnect(Disconnect)
    case leConnectionUpdate(LEConnectionUpdate)
    case leSetDataLength(LESetDataLength)
    case leReadSuggestedDefaultDataLength
    case leWriteSuggestedDefaultDataLength(LEWriteSuggestedDefaultDataLength)
    case leSetPHY(LESetPHY)
    case leSetDefaultPHY(LESetDefaultPHY)
    case leReadPHY(ConnectionHandleParameter)
    case readRemoteVersionInformation(ConnectionHandleParameter)
    case leReadRemoteFeatures(ConnectionHandleParameter)
    /// LE Enable Encryption (§7.8.24).
    case leEnableEncryption(LEEnableEncryption)
    /// LE Long Term Key Request Reply (§7.8.25).
    case leLongTermKeyRequestReply(LELongTermKeyRequestReply)
    /// LE Long Term Key Request Negative Reply (§7.8.26): no key for this link.
    case leLongTermKeyRequestNegativeReply(ConnectionHandleParameter)
    /// LE Add Device To Resolving List (§7.8.38).
    case leAddDeviceToResolvingList(LEAddDeviceToResolvingList)
    /// LE Clear Resolving List (§7.8.40).
    case leClearResolvingList
    /// LE Read Resolving List Size (§7.8.41).
    case leReadResolvingListSize
    /// LE Set Address Resolution Enable (§7.8.44).
    case leSetAddressResolutionEnable(LESetAddressResolutionEnable)
    /// Any other command, kept as opcode and undecoded parameters.
    case raw(opcode: HCIOpcode, parameters: ArraySlice<UInt8>)

    public var opcode: HCIOpcode {
        switch self {
        case .reset: .reset
        case .readLocalVersionInformation: .readLocalVersionInformation
        case .readLocalSupportedCommands: .readLocalSupportedCommands
        case .readLocalSupportedFeatures: .readLocalSupportedFeatures
        case .readBDADDR: .readBDADDR
        case .readBufferSize: .readBufferSize
        case .setEventMask: .setEventMask
        case .leSetEventMask: .leSetEventMask
        case .leReadBufferSize: .leReadBufferSize
        case .leReadBufferSizeV2: .leReadBufferSizeV2
        case .leReadLocalSupportedFeatures: .leReadLocalSupportedFeatures
        case .leSetRandomAddress: .leSetRandomAddress
        case .leSetScanParameters: .leSetScanParameters
        case .leSetScanEnable: .leSetScanEnable
        case .leSetExtendedScanParameters: .leSetExtendedScanParameters
        case .leSetExtendedScanEnable: .leSetExtendedScanEnable
        case .leSetAdvertisingParameters: .leSetAdvertisingParameters
        case .leSetAdvertisingData: .leSetAdvertisingData
        case .leSetScanResponseData: .leSetScanResponseData
        case .leSetAdvertisingEnable: .leSetAdvertisingEnable
        case .leSetExtendedAdvertisingParameters: .leSetExtendedAdvertisingParameters
        case .leSetExtendedAdvertisingData: .leSetExtendedAdvertisingData
        case .leSetExtendedScanResponseData: .leSetExtendedScanResponseData
        case .leSetExtendedAdvertisingEnable: .leSetExtendedAdvertisingEnable
        case .leRemoveAdvertisingSet: .leRemoveAdvertisingSet
        case .leClearAdvertisingSets: .leClearAdvertisingSets
        case .leReadMaximumAdvertisingDataLength: .leReadMaximumAdvertisingDataLength
        case .leReadNumberOfSupportedAdvertisingSets: .leReadNumberOfSupportedAdvertisingSets
        case .leCreateConnection: .leCreateConnection
        case .leExtendedCreateConnection: .leExtendedCreateConnection
        case .leCreateConnectionCancel: .leCreateConnectionCancel
        case .disconnect: .disconnect
        case .leConnectionUpdate: .leConnectionUpdate
        case .leSetDataLength: .leSetDataLength
        case .leReadSuggestedDefaultDataLength: .leReadSuggestedDefaultDataLength
        case .leWriteSuggestedDefaultDataLength: .leWriteSuggestedDefaultDataLength
        case .leSetPHY: .leSetPHY
        case .leSetDefaultPHY: .leSetDefaultPHY
        case .leReadPHY: .leReadPHY
        case .readRemoteVersionInformation: .readRemoteVersionInformation
        case .leReadRemoteFeatures: .leReadRemoteFeatures
        case .leEnableEncryption: .leEnableEncryption
        case .leLongTermKeyRequestReply: .leLongTermKeyRequestReply
        case .leLongTermKeyRequestNegativeReply: .leLongTermKeyRequestNegativeReply
        case .leAddDeviceToResolvingList: .leAddDeviceToResolvingList
        case .leClearResolvingList: .leClearResolvingList
        case .leReadResolvingListSize: .leReadResolvingListSize
        case .leSetAddressResolutionEnable: .leSetAddressResolutionEnable
        case .raw(let opcode, _): opcode
        }
    }

    /// Appends the command's parameters (without opcode and length).
    public func encodeParameters(into w: inout ByteWriter) {
        switch self {
        case .reset, .readLocalVersionInformation, .readLocalSupportedCommands, .readLocalSupportedFeatures,
            .readBDADDR, .readBufferSize, .leReadBufferSize, .leReadBufferSizeV2, .leReadLocalSupportedFeatures,
            .leClearAdvertisingSets, .leReadMaximumAdvertisingDataLength, .leReadNumberOfSupportedAdvertisingSets,
            .leCreateConnectionCancel, .leReadSuggestedDefaultDataLength, .leClearResolvingList, .leReadResolvingListSize:
            break
        case .setEventMask(let p), .leSetEventMask(let p): p.encode(into: &w)
        case .leSetRandomAddress(let p): p.encode(into: &w)
        case .leSetScanParameters(let p): p.encode(into: &w)
        case .leSetScanEnable(let p): p.encode(into: &w)
        case .leSetExtendedScanParameters(let p): p.encode(into: &w)
        case .leSetExtendedScanEnable(let p): p.encode(into: &w)
        case .leSetAdvertisingParameters(let p): p.encode(into: &w)
        case .leSetAdvertisingData(let p): p.encode(into: &w)
        case .leSetScanResponseData(let p): p.encode(into: &w)
        case .leSetAdvertisingEnable(let p): p.encode(into: &w)
        case .leSetExtendedAdvertisingParameters(let p): p.encode(into: &w)
        case .leSetExtendedAdvertisingData(let p): p.encode(into: &w)
        case .leSetExtendedScanResponseData(let p): p.encode(into: &w)
        case .leSetExtendedAdvertisingEnable(let p): p.encode(into: &w)
        case .leRemoveAdvertisingSet(let p): p.encode(into: &w)
        case .leCreateConnection(let p): p.encode(into: &w)
        case .leExtendedCreateConnection(let p): p.encode(into: &w)
        case .disconnect(let p): p.encode(into: &w)
        case .leConnectionUpdate(let p): p.encode(into: &w)
        case .leSetDataLength(let p): p.encode(into: &w)
        case .leWriteSuggestedDefaultDataLength(let p): p.encode(into: &w)
        case .leSetPHY(let p): p.encode(into: &w)
        case .leSetDefaultPHY(let p): p.encode(into: &w)
        case .leReadPHY(let p), .readRemoteVersionInformation(let p), .leReadRemoteFeatures(let p),
            .leLongTermKeyRequestNegativeReply(let p):
            p.encode(into: &w)
        case .leEnableEncryption(let p): p.encode(into: &w)
        case .leLongTermKeyRequestReply(let p): p.encode(into: &w)
        case .leAddDeviceToResolvingList(let p): p.encode(into: &w)
        case .leSetAddressResolutionEnable(let p): p.encode(into: &w)
        case .raw(_, let parameters): w.append(contentsOf: parameters)
        }
    }

    /// The command packet bytes after the H4 indicator: opcode, Parameter_Total_Length, parameters.
    public var encoded: [UInt8] {
        var w = ByteWriter(capacity: 3 + 32)
        w.append(opcode.rawValue)
        w.append(UInt8(0))
        encodeParameters(into: &w)
        // Parameter_Total_Length is one octet: a longer raw payload is cut rather than mis-framed.
        let length = min(w.count - 3, 255)
        w.bytes[2] = UInt8(length)
        if w.count > 3 + length { w.bytes.removeLast(w.count - 3 - length) }
        return w.bytes
    }

    /// The command as an HCI packet, ready for a transport or a capture.
    public var packet: HCIPacket { HCIPacket(type: .command, payload: encoded) }
}
