import BluewireCore

extension ATTPDU {
    /// Decodes one ATT PDU (opcode first). Values are slices of `pdu`; nothing is copied.
    ///
    /// Fails with a `DecodeError` (layer "att", the field as the specification names it, its offset
    /// from the opcode) when a known PDU is truncated, carries trailing octets after fixed fields, or
    /// is internally inconsistent. A server answers such a request with Invalid PDU (§3.4.1.1).
    /// Unknown opcodes are not an error: they decode to `.unknown`.
    @inlinable
    public init(decoding pdu: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(pdu, layer: "att")
        let opcode = ATTOpcode(try r.readUInt8("Attribute Opcode"))
        switch opcode {
        case .errorResponse:
            let request = ATTOpcode(try r.readUInt8("Request Opcode In Error"))
            let handle = try r.readUInt16("Attribute Handle In Error")
            let code = ATTErrorCode(try r.readUInt8("Error Code"))
            try r.expectEnd("Error Response")
            self = .errorResponse(requestOpcode: request, handle: handle, error: code)
        case .exchangeMTURequest:
            let mtu = try r.readUInt16("Client Rx MTU")
            try r.expectEnd("Exchange MTU Request")
            self = .exchangeMTURequest(clientRxMTU: mtu)
        case .exchangeMTUResponse:
            let mtu = try r.readUInt16("Server Rx MTU")
            try r.expectEnd("Exchange MTU Response")
            self = .exchangeMTUResponse(serverRxMTU: mtu)
        case .findInformationRequest:
            let start = try r.readUInt16("Starting Handle")
            let end = try r.readUInt16("Ending Handle")
            try r.expectEnd("Find Information Request")
            self = .findInformationRequest(startingHandle: start, endingHandle: end)
        case .findInformationResponse:
            let format = try r.readUInt8("Format")
            self = .findInformationResponse(
                try FindInformationResponse(format: format, informationData: r.readRemaining(), offset: 1))
        case .findByTypeValueRequest:
            let start = try r.readUInt16("Starting Handle")
            let end = try r.readUInt16("Ending Handle")
            let type = try r.readUInt16("Attribute Type")
            self = .findByTypeValueRequest(
                startingHandle: start, endingHandle: end, attributeType: type, attributeValue: r.readRemaining())
        case .findByTypeValueResponse:
            self = .findByTypeValueResponse(
                try FindByTypeValueResponse(handlesInformationList: r.readRemaining(), offset: 1))
        case .readByTypeRequest:
            let start = try r.readUInt16("Starting Handle")
            let end = try r.readUInt16("Ending Handle")
            let type = try Self.readATTUUID(&r, "Attribute Type")
            self = .readByTypeRequest(startingHandle: start, endingHandle: end, attributeType: type)
        case .readByTypeResponse:
            let length = try r.readUInt8("Length")
            self = .readByTypeResponse(
                try ReadByTypeResponse(length: length, attributeDataList: r.readRemaining(), offset: 1))
        case .readRequest:
            let handle = try r.readUInt16("Attribute Handle")
            try r.expectEnd("Read Request")
            self = .readRequest(handle: handle)
        case .readResponse:
            self = .readResponse(value: r.readRemaining())
        case .readBlobRequest:
            let handle = try r.readUInt16("Attribute Handle")
            let offset = try r.readUInt16("Value Offset")
            try r.expectEnd("Read Blob Request")
            self = .readBlobRequest(handle: handle, offset: offset)
        case .readBlobResponse:
            self = .readBlobResponse(value: r.readRemaining())
        case .readMultipleRequest:
            self = .readMultipleRequest(try ATTHandleList(validating: r.readRemaining(), offset: 1))
        case .readMultipleResponse:
            self = .readMultipleResponse(values: r.readRemaining())
        case .readByGroupTypeRequest:
            let start = try r.readUInt16("Starting Handle")
            let end = try r.readUInt16("Ending Handle")
            let type = try Self.readATTUUID(&r, "Attribute Group Type")
            self = .readByGroupTypeRequest(startingHandle: start, endingHandle: end, attributeGroupType: type)
        case .readByGroupTypeResponse:
            let length = try r.readUInt8("Length")
            self = .readByGroupTypeResponse(
                try ReadByGroupTypeResponse(length: length, attributeDataList: r.readRemaining(), offset: 1))
        case .readMultipleVariableRequest:
            self = .readMultipleVariableRequest(try ATTHandleList(validating: r.readRemaining(), offset: 1))
        case .readMultipleVariableResponse:
            self = .readMultipleVariableResponse(ReadMultipleVariableResponse(lengthValueTupleList: r.readRemaining()))
        case .writeRequest:
            let handle = try r.readUInt16("Attribute Handle")
            self = .writeRequest(handle: handle, value: r.readRemaining())
        case .writeResponse:
            try r.expectEnd("Write Response")
            self = .writeResponse
        case .writeCommand:
            let handle = try r.readUInt16("Attribute Handle")
            self = .writeCommand(handle: handle, value: r.readRemaining())
        case .signedWriteCommand:
            let handle = try r.readUInt16("Attribute Handle")
            try r.require(12, "Authentication Signature")
            let value = try r.readBytes(r.remainingCount - 12, "Attribute Value")
            let signature = r.readRemaining()
            self = .signedWriteCommand(handle: handle, value: value, authenticationSignature: signature)
        case .prepareWriteRequest:
            let handle = try r.readUInt16("Attribute Handle")
            let offset = try r.readUInt16("Value Offset")
            self = .prepareWriteRequest(handle: handle, offset: offset, partValue: r.readRemaining())
        case .prepareWriteResponse:
            let handle = try r.readUInt16("Attribute Handle")
            let offset = try r.readUInt16("Value Offset")
            self = .prepareWriteResponse(handle: handle, offset: offset, partValue: r.readRemaining())
        case .executeWriteRequest:
            let flags = ATTExecuteWriteFlags(rawValue: try r.readUInt8("Flags"))
            try r.expectEnd("Execute Write Request")
            self = .executeWriteRequest(flags: flags)
        case .executeWriteResponse:
            try r.expectEnd("Execute Write Response")
            self = .executeWriteResponse
        case .handleValueNotification:
            let handle = try r.readUInt16("Attribute Handle")
            self = .handleValueNotification(handle: handle, value: r.readRemaining())
        case .handleValueIndication:
            let handle = try r.readUInt16("Attribute Handle")
            self = .handleValueIndication(handle: handle, value: r.readRemaining())
        case .handleValueConfirmation:
            try r.expectEnd("Handle Value Confirmation")
            self = .handleValueConfirmation
        case .multipleHandleValueNotification:
            self = .multipleHandleValueNotification(
                try MultipleHandleValueNotification(handleLengthValueTupleList: r.readRemaining(), offset: 1))
        default:
            self = .unknown(opcode, parameters: r.readRemaining())
        }
    }

    /// Decodes one ATT PDU from an array (see `init(decoding:)` for slices).
    @inlinable
    public init(decoding pdu: [UInt8]) throws(DecodeError) {
        try self.init(decoding: pdu[...])
    }

    /// ATT carries UUIDs as 2 or 16 octets only (§3.2.1): a 32-bit UUID must be sent as 128 bits.
    @inlinable
    static func readATTUUID(_ r: inout ByteReader, _ field: StaticString) throws(DecodeError) -> BluetoothUUID {
        let count = r.remainingCount
        guard count == 2 || count == 16 else {
            throw r.error(.lengthMismatch(declared: count < 16 ? 2 : 16, actual: count), field)
        }
        guard let uuid = BluetoothUUID(littleEndian: r.readRemaining()) else {
            throw r.error(.invalidValue(UInt64(count)), field)
        }
        return uuid
    }
}
