import BluewireCore

extension ATTPDU {
    /// Appends the PDU's wire form (opcode first) to `w`. UUIDs go out as 2 octets when they are 16-bit
    /// aliases and as 16 otherwise (§3.2.1).
    @inlinable
    public func encode(into w: inout ByteWriter) {
        w.append(opcode.rawValue)
        switch self {
        case .errorResponse(let request, let handle, let error):
            w.append(request.rawValue)
            w.append(handle)
            w.append(error.rawValue)
        case .exchangeMTURequest(let mtu), .exchangeMTUResponse(let mtu):
            w.append(mtu)
        case .findInformationRequest(let start, let end):
            w.append(start)
            w.append(end)
        case .findInformationResponse(let response):
            w.append(response.format.rawValue)
            w.append(contentsOf: response.informationData)
        case .findByTypeValueRequest(let start, let end, let type, let value):
            w.append(start)
            w.append(end)
            w.append(type)
            w.append(contentsOf: value)
        case .findByTypeValueResponse(let response):
            w.append(contentsOf: response.handlesInformationList)
        case .readByTypeRequest(let start, let end, let type),
             .readByGroupTypeRequest(let start, let end, let type):
            w.append(start)
            w.append(end)
            w.append(contentsOf: type.attBytes)
        case .readByTypeResponse(let response):
            w.append(response.length)
            w.append(contentsOf: response.attributeDataList)
        case .readRequest(let handle):
            w.append(handle)
        case .readResponse(let value), .readBlobResponse(let value), .readMultipleResponse(let value):
            w.append(contentsOf: value)
        case .readBlobRequest(let handle, let offset):
            w.append(handle)
            w.append(offset)
        case .readMultipleRequest(let handles), .readMultipleVariableRequest(let handles):
            w.append(contentsOf: handles.bytes)
        case .readByGroupTypeResponse(let response):
            w.append(response.length)
            w.append(contentsOf: response.attributeDataList)
        case .readMultipleVariableResponse(let response):
            w.append(contentsOf: response.lengthValueTupleList)
        case .writeRequest(let handle, let value), .writeCommand(let handle, let value),
             .handleValueNotification(let handle, let value), .handleValueIndication(let handle, let value):
            w.append(handle)
            w.append(contentsOf: value)
        case .signedWriteCommand(let handle, let value, let signature):
            w.append(handle)
            w.append(contentsOf: value)
            w.append(contentsOf: signature)
        case .prepareWriteRequest(let handle, let offset, let value),
             .prepareWriteResponse(let handle, let offset, let value):
            w.append(handle)
            w.append(offset)
            w.append(contentsOf: value)
        case .executeWriteRequest(let flags):
            w.append(flags.rawValue)
        case .writeResponse, .executeWriteResponse, .handleValueConfirmation:
            break
        case .multipleHandleValueNotification(let notification):
            w.append(contentsOf: notification.handleLengthValueTupleList)
        case .unknown(_, let parameters):
            w.append(contentsOf: parameters)
        }
    }

    /// The PDU's wire form (opcode first).
    @inlinable
    public func encode() -> [UInt8] {
        var w = ByteWriter(capacity: capacityHint)
        encode(into: &w)
        return w.bytes
    }

    /// Enough octets for the PDU in one allocation: opcode, handle and offset, plus the value of the
    /// PDUs that carry one (notifications and reads on the streaming paths), else 32.
    @inlinable
    var capacityHint: Int {
        switch self {
        case .readResponse(let value), .readBlobResponse(let value), .readMultipleResponse(let value),
             .writeRequest(_, let value), .writeCommand(_, let value),
             .prepareWriteRequest(_, _, let value), .prepareWriteResponse(_, _, let value),
             .handleValueNotification(_, let value), .handleValueIndication(_, let value):
            return 5 + value.count
        default:
            return 32
        }
    }
}
