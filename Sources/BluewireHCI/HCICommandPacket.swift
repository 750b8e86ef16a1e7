import BluewireCore

/// The framing of an HCI command packet (Core Vol 4 Part E §5.4.1): opcode, one-octet
/// Parameter_Total_Length, parameters. The parameters slice shares the input's storage.
public struct HCICommandPacket: Hashable, Sendable {
    public var opcode: HCIOpcode
    public var parameters: ArraySlice<UInt8>

    public init(opcode: HCIOpcode, parameters: ArraySlice<UInt8>) {
        self.opcode = opcode
        self.parameters = parameters
    }

    /// Reads the header of a command packet (the bytes after the H4 indicator). Bytes beyond
    /// Parameter_Total_Length are ignored; fewer than it declares is a truncation error.
    @inlinable
    public init(decoding payload: ArraySlice<UInt8>) throws(DecodeError) {
        var reader = ByteReader(payload, layer: "hci")
        opcode = HCIOpcode(rawValue: try reader.readUInt16("Command_Opcode"))
        let length = try reader.readUInt8("Parameter_Total_Length")
        parameters = try reader.readBytes(Int(length), "Parameters")
    }
}

extension HCICommand {
    /// Decodes a command packet (bytes after the H4 indicator) into a typed command.
    ///
    /// Unknown opcodes give `.raw`; a known opcode whose parameters are too short is a `DecodeError`
    /// whose offset counts from the start of the packet.
    public init(decoding payload: ArraySlice<UInt8>) throws(DecodeError) {
        try self.init(try HCICommandPacket(decoding: payload))
    }

    /// Decodes the parameters of an already framed command packet.
    public init(_ packet: HCICommandPacket) throws(DecodeError) {
        var r = ByteReader(packet.parameters, layer: "hci")
        do {
            self = try Self.decodeTyped(packet, &r)
        } catch {
            throw error.relocated(by: 3, layer: "hci")
        }
    }

    private static func decodeTyped(_ packet: HCICommandPacket, _ r: inout ByteReader) throws(DecodeError) -> HCICommand {
        switch packet.opcode {
        case .reset: return .reset
        case .readLocalVersionInformation: return .readLocalVersionInformation
        case .readLocalSupportedCommands: return .readLocalSupportedCommands
        case .readLocalSupportedFeatures: return .readLocalSupportedFeatures
        case .readBDADDR: return .readBDADDR
        case .readBufferSize: return .readBufferSize
        case .setEventMask: return .setEventMask(try EventMask(decoding: &r))
        case .leSetEventMask: return .leSetEventMask(try EventMask(decoding: &r))
        case .leReadBufferSize: return .leReadBufferSize
        case .leReadBufferSizeV2: return .leReadBufferSizeV2
        case .leReadLocalSupportedFeatures: return .leReadLocalSupportedFeatures
        case .leSetRandomAddress: return .leSetRandomAddress(try LESetRandomAddress(decoding: &r))
        case .leSetScanParameters: return .leSetScanParameters(try LESetScanParameters(decoding: &r))
        case .leSetScanEnable: return .leSetScanEnable(try LESetScanEnable(decoding: &r))
        case .leSetExtendedScanParameters: return .leSetExtendedScanParameters(try LESetExtendedScanParameters(decoding: &r))
        case .leSetExtendedScanEnable: return .leSetExtendedScanEnable(try LESetExtendedScanEnable(decoding: &r))
        case .leSetAdvertisingParameters: return .leSetAdvertisingParameters(try LESetAdvertisingParameters(decoding: &r))
        case .leSetAdvertisingData: return .leSetAdvertisingData(try LESetAdvertisingData(decoding: &r))
        case .leSetScanResponseData: return .leSetScanResponseData(try LESetScanResponseData(decoding: &r))
        case .leSetAdvertisingEnable: return .leSetAdvertisingEnable(try LESetAdvertisingEnable(decoding: &r))
        case .leSetExtendedAdvertisingParameters:
            return .leSetExtendedAdvertisingParameters(try LESetExtendedAdvertisingParameters(decoding: &r))
        case .leSetExtendedAdvertisingData: return .leSetExtendedAdvertisingData(try LESetExtendedAdvertisingData(decoding: &r))
        case .leSetExtendedScanResponseData: return .leSetExtendedScanResponseData(try LESetExtendedScanResponseData(decoding: &r))
        case .leSetExtendedAdvertisingEnable: return .leSetExtendedAdvertisingEnable(try LESetExtendedAdvertisingEnable(decoding: &r))
        case .leRemoveAdvertisingSet: return .leRemoveAdvertisingSet(try LERemoveAdvertisingSet(decoding: &r))
        case .leClearAdvertisingSets: return .leClearAdvertisingSets
        case .leReadMaximumAdvertisingDataLength: return .leReadMaximumAdvertisingDataLength
        case .leReadNumberOfSupportedAdvertisingSets: return .leReadNumberOfSupportedAdvertisingSets
        case .leCreateConnection: return .leCreateConnection(try LECreateConnection(decoding: &r))
        case .leExtendedCreateConnection: return .leExtendedCreateConnection(try LEExtendedCreateConnection(decoding: &r))
        case .leCreateConnectionCancel: return .leCreateConnectionCancel
        case .disconnect: return .disconnect(try Disconnect(decoding: &r))
        case .leConnectionUpdate: return .leConnectionUpdate(try LEConnectionUpdate(decoding: &r))
        case .leSetDataLength: return .leSetDataLength(try LESetDataLength(decoding: &r))
        case .leReadSuggestedDefaultDataLength: return .leReadSuggestedDefaultDataLength
        case .leWriteSuggestedDefaultDataLength:
            return .leWriteSuggestedDefaultDataLength(try LEWriteSuggestedDefaultDataLength(decoding: &r))
        case .leSetPHY: return .leSetPHY(try LESetPHY(decoding: &r))
        case .leSetDefaultPHY: return .leSetDefaultPHY(try LESetDefaultPHY(decoding: &r))
        case .leReadPHY: return .leReadPHY(try ConnectionHandleParameter(decoding: &r))
        case .readRemoteVersionInformation: return .readRemoteVersionInformation(try ConnectionHandleParameter(decoding: &r))
        case .leReadRemoteFeatures: return .leReadRemoteFeatures(try ConnectionHandleParameter(decoding: &r))
        case .leEnableEncryption: return .leEnableEncryption(try LEEnableEncryption(decoding: &r))
        case .leLongTermKeyRequestReply: return .leLongTermKeyRequestReply(try LELongTermKeyRequestReply(decoding: &r))
        case .leLongTermKeyRequestNegativeReply:
            return .leLongTermKeyRequestNegativeReply(try ConnectionHandleParameter(decoding: &r))
        case .leAddDeviceToResolvingList: return .leAddDeviceToResolvingList(try LEAddDeviceToResolvingList(decoding: &r))
        case .leClearResolvingList: return .leClearResolvingList
        case .leReadResolvingListSize: return .leReadResolvingListSize
        case .leSetAddressResolutionEnable:
            return .leSetAddressResolutionEnable(try LESetAddressResolutionEnable(decoding: &r))
        default: return .raw(opcode: packet.opcode, parameters: packet.parameters)
        }
    }
}
