import BluewireCore

/// One Attribute Protocol PDU (Core Vol 3 Part F §3.4), decoded without copying: every value, list and
/// signature is a slice of the received bytes.
///
/// Handles are plain `UInt16` as on the wire; 0x0000 is reserved (§3.2.2) and servers answer it with
/// Invalid Handle, which is a rule of the request's handling, not of the PDU format.
public enum ATTPDU: Hashable, Sendable {
    /// §3.4.1.1: the request `requestOpcode` on `handle` failed with `error`.
    case errorResponse(requestOpcode: ATTOpcode, handle: UInt16, error: ATTErrorCode)
    /// §3.4.2.1: the client's receive MTU.
    case exchangeMTURequest(clientRxMTU: UInt16)
    /// §3.4.2.2: the server's receive MTU.
    case exchangeMTUResponse(serverRxMTU: UInt16)
    /// §3.4.3.1
    case findInformationRequest(startingHandle: UInt16, endingHandle: UInt16)
    /// §3.4.3.2
    case findInformationResponse(FindInformationResponse)
    /// §3.4.3.3: find attributes of a 16-bit type whose value equals `attributeValue`.
    case findByTypeValueRequest(
        startingHandle: UInt16, endingHandle: UInt16, attributeType: UInt16, attributeValue: ArraySlice<UInt8>)
    /// §3.4.3.4
    case findByTypeValueResponse(FindByTypeValueResponse)
    /// §3.4.4.1: `attributeType` is sent as 2 or 16 octets.
    case readByTypeRequest(startingHandle: UInt16, endingHandle: UInt16, attributeType: BluetoothUUID)
    /// §3.4.4.2
    case readByTypeResponse(ReadByTypeResponse)
    /// §3.4.4.3
    case readRequest(handle: UInt16)
    /// §3.4.4.4: at most ATT_MTU − 1 octets of the value.
    case readResponse(value: ArraySlice<UInt8>)
    /// §3.4.4.5
    case readBlobRequest(handle: UInt16, offset: UInt16)
    /// §3.4.4.6: part of the value starting at the requested offset.
    case readBlobResponse(value: ArraySlice<UInt8>)
    /// §3.4.4.7
    case readMultipleRequest(ATTHandleList)
    /// §3.4.4.8: the values concatenated, with no lengths (only fixed-size values can be split apart).
    case readMultipleResponse(values: ArraySlice<UInt8>)
    /// §3.4.4.9: `attributeGroupType` is sent as 2 or 16 octets.
    case readByGroupTypeRequest(startingHandle: UInt16, endingHandle: UInt16, attributeGroupType: BluetoothUUID)
    /// §3.4.4.10
    case readByGroupTypeResponse(ReadByGroupTypeResponse)
    /// §3.4.4.11
    case readMultipleVariableRequest(ATTHandleList)
    /// §3.4.4.12
    case readMultipleVariableResponse(ReadMultipleVariableResponse)
    /// §3.4.5.1
    case writeRequest(handle: UInt16, value: ArraySlice<UInt8>)
    /// §3.4.5.2
    case writeResponse
    /// §3.4.5.3: no response is sent.
    case writeCommand(handle: UInt16, value: ArraySlice<UInt8>)
    /// §3.4.5.4: `authenticationSignature` is the trailing 12 octets (Vol 3 Part H §2.4.5).
    case signedWriteCommand(handle: UInt16, value: ArraySlice<UInt8>, authenticationSignature: ArraySlice<UInt8>)
    /// §3.4.6.1
    case prepareWriteRequest(handle: UInt16, offset: UInt16, partValue: ArraySlice<UInt8>)
    /// §3.4.6.2: echoes the request so the client can check the server queued what it sent.
    case prepareWriteResponse(handle: UInt16, offset: UInt16, partValue: ArraySlice<UInt8>)
    /// §3.4.6.3
    case executeWriteRequest(flags: ATTExecuteWriteFlags)
    /// §3.4.6.4
    case executeWriteResponse
    /// §3.4.7.1: at most ATT_MTU − 3 octets of the value.
    case handleValueNotification(handle: UInt16, value: ArraySlice<UInt8>)
    /// §3.4.7.2: the client must answer with a Handle Value Confirmation.
    case handleValueIndication(handle: UInt16, value: ArraySlice<UInt8>)
    /// §3.4.7.3
    case handleValueConfirmation
    /// §3.4.7.4
    case multipleHandleValueNotification(MultipleHandleValueNotification)
    /// An opcode this stack does not know. A server answers it with Request Not Supported when it is a
    /// request (command flag clear) and ignores it when it is a command (§3.4.1.1, §3.3.2).
    case unknown(ATTOpcode, parameters: ArraySlice<UInt8>)

    /// The PDU's opcode.
    @inlinable
    public var opcode: ATTOpcode {
        switch self {
        case .errorResponse: return .errorResponse
        case .exchangeMTURequest: return .exchangeMTURequest
        case .exchangeMTUResponse: return .exchangeMTUResponse
        case .findInformationRequest: return .findInformationRequest
        case .findInformationResponse: return .findInformationResponse
        case .findByTypeValueRequest: return .findByTypeValueRequest
        case .findByTypeValueResponse: return .findByTypeValueResponse
        case .readByTypeRequest: return .readByTypeRequest
        case .readByTypeResponse: return .readByTypeResponse
        case .readRequest: return .readRequest
        case .readResponse: return .readResponse
        case .readBlobRequest: return .readBlobRequest
        case .readBlobResponse: return .readBlobResponse
        case .readMultipleRequest: return .readMultipleRequest
        case .readMultipleResponse: return .readMultipleResponse
        case .readByGroupTypeRequest: return .readByGroupTypeRequest
        case .readByGroupTypeResponse: return .readByGroupTypeResponse
        case .readMultipleVariableRequest: return .readMultipleVariableRequest
        case .readMultipleVariableResponse: return .readMultipleVariableResponse
        case .writeRequest: return .writeRequest
        case .writeResponse: return .writeResponse
        case .writeCommand: return .writeCommand
        case .signedWriteCommand: return .signedWriteCommand
        case .prepareWriteRequest: return .prepareWriteRequest
        case .prepareWriteResponse: return .prepareWriteResponse
        case .executeWriteRequest: return .executeWriteRequest
        case .executeWriteResponse: return .executeWriteResponse
        case .handleValueNotification: return .handleValueNotification
        case .handleValueIndication: return .handleValueIndication
        case .handleValueConfirmation: return .handleValueConfirmation
        case .multipleHandleValueNotification: return .multipleHandleValueNotification
        case .unknown(let opcode, _): return opcode
        }
    }
}

/// The Flags of an Execute Write Request (Core Vol 3 Part F §3.4.6.3). Other values are reserved; a
/// server answers them with Invalid PDU, so the raw value is kept.
public struct ATTExecuteWriteFlags: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x00: cancel all prepared writes.
    public static let cancelAllPreparedWrites = ATTExecuteWriteFlags(rawValue: 0x00)
    /// 0x01: immediately write all pending prepared values.
    public static let writeAllPreparedValues = ATTExecuteWriteFlags(rawValue: 0x01)
}
