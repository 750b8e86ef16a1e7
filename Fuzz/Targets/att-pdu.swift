import BluewireATT
import BluewireCore

// ATT PDU decoder, encoder and list response builders, fed one PDU (opcode first) as a peer sends it.
//
// Invariants checked:
// - decoding never traps; an error's offset lies inside the PDU;
// - the decoded opcode is the first byte, and every slice lies inside the input (zero-copy);
// - decode → encode → decode gives an equal PDU, and the encoding is the input itself except where
//   ATT allows two spellings (a 128-bit UUID that is a 16-bit alias is re-encoded in 2 octets);
// - list responses: iteration consumes the whole list, and rebuilding the list with the server-side
//   builders (`append(…, mtu:)`) gives the same bytes.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = FuzzInput(data, size)
    let bytes = input.bytes[...]
    let pdu: ATTPDU
    do {
        pdu = try ATTPDU(decoding: bytes)
    } catch {
        require(error.offset >= 0 && error.offset <= bytes.count, "error offset \(error.offset) outside \(bytes.count) bytes: \(error)")
        _ = error.description
        return 0
    }
    require(pdu.opcode.rawValue == bytes[bytes.startIndex], "opcode \(pdu.opcode) from first byte \(bytes[bytes.startIndex])")
    _ = pdu.opcode.kind
    _ = pdu.opcode.description

    let encoded = pdu.encode()
    let again: ATTPDU
    do {
        again = try ATTPDU(decoding: encoded)
    } catch {
        require(false, "re-encoded \(pdu) does not decode: \(error)")
        return 0
    }
    require(again == pdu, "round trip differs:\n  \(pdu)\n  \(again)")
    switch pdu {
    case .readByTypeRequest(_, _, let uuid), .readByGroupTypeRequest(_, _, let uuid):
        require(encoded.count == 5 + uuid.attSize, "UUID request encoded in \(encoded.count) bytes")
    default:
        require(encoded == Array(bytes), "encoding differs from the input for \(pdu)")
    }

    checkLists(pdu, bytes)
    return 0
}

func inside(_ slice: ArraySlice<UInt8>, _ bytes: ArraySlice<UInt8>, _ what: String) {
    require(slice.isEmpty || (slice.startIndex >= bytes.startIndex && slice.endIndex <= bytes.endIndex),
            "\(what) \(slice.startIndex)..<\(slice.endIndex) outside the PDU")
}

let bigMTU = 65_535

func checkLists(_ pdu: ATTPDU, _ bytes: ArraySlice<UInt8>) {
    switch pdu {
    case .findInformationResponse(let response):
        inside(response.informationData, bytes, "Information Data")
        var count = 0
        var rebuilt = FindInformationResponse()
        var sameFormat = true
        for entry in response.entries {
            count += 1
            sameFormat = sameFormat && rebuilt.append(handle: entry.handle, type: entry.type, mtu: bigMTU)
        }
        require(count * response.format.entrySize == response.informationData.count, "Find Information entries do not cover the list")
        // A 128-bit entry holding a 16-bit alias is rebuilt in the 16-bit format: only compare plain lists.
        if sameFormat && rebuilt.format == response.format {
            require(Array(rebuilt.informationData) == Array(response.informationData), "Find Information rebuild differs")
        }
    case .findByTypeValueResponse(let response):
        inside(response.handlesInformationList, bytes, "Handles Information List")
        var rebuilt = FindByTypeValueResponse()
        for entry in response.entries {
            require(rebuilt.append(foundAttributeHandle: entry.foundAttributeHandle, groupEndHandle: entry.groupEndHandle, mtu: bigMTU),
                    "Find By Type Value builder refused an entry")
        }
        require(Array(rebuilt.handlesInformationList) == Array(response.handlesInformationList), "Find By Type Value rebuild differs")
    case .readByTypeResponse(let response):
        inside(response.attributeDataList, bytes, "Attribute Data List")
        var rebuilt = ReadByTypeResponse()
        for entry in response.entries {
            inside(entry.value, bytes, "Read By Type value")
            require(rebuilt.append(handle: entry.handle, value: entry.value, mtu: bigMTU), "Read By Type builder refused an entry")
        }
        require(rebuilt.length == response.length && Array(rebuilt.attributeDataList) == Array(response.attributeDataList),
                "Read By Type rebuild differs")
    case .readByGroupTypeResponse(let response):
        inside(response.attributeDataList, bytes, "Attribute Data List")
        var rebuilt = ReadByGroupTypeResponse()
        for entry in response.entries {
            inside(entry.value, bytes, "Read By Group Type value")
            require(rebuilt.append(handle: entry.handle, endGroupHandle: entry.endGroupHandle, value: entry.value, mtu: bigMTU),
                    "Read By Group Type builder refused an entry")
        }
        require(rebuilt.length == response.length && Array(rebuilt.attributeDataList) == Array(response.attributeDataList),
                "Read By Group Type rebuild differs")
    case .multipleHandleValueNotification(let notification):
        var rebuilt = MultipleHandleValueNotification()
        for entry in notification.entries {
            inside(entry.value, bytes, "notification value")
            require(rebuilt.append(handle: entry.handle, value: entry.value, mtu: bigMTU), "notification builder refused a tuple")
        }
        require(Array(rebuilt.handleLengthValueTupleList) == Array(notification.handleLengthValueTupleList),
                "Multiple Handle Value Notification rebuild differs")
    case .readMultipleVariableResponse(let response):
        var rebuilt = ReadMultipleVariableResponse()
        var truncated = false
        var covered = 0
        for entry in response.entries {
            inside(entry.value, bytes, "variable value")
            require(entry.value.count <= Int(entry.valueLength), "value longer than its Value Length")
            truncated = truncated || entry.isTruncated
            covered += 2 + entry.value.count
            _ = rebuilt.append(value: entry.value, mtu: bigMTU)
        }
        require(covered <= response.lengthValueTupleList.count, "variable entries cover more than the list")
        if !truncated && covered == response.lengthValueTupleList.count {
            require(Array(rebuilt.lengthValueTupleList) == Array(response.lengthValueTupleList), "Read Multiple Variable rebuild differs")
        }
    case .readMultipleRequest(let handles), .readMultipleVariableRequest(let handles):
        var count = 0
        for _ in handles { count += 1 }
        require(count == handles.count && count * 2 == handles.bytes.count, "handle list iteration")
        require(ATTHandleList(Array(handles)).bytes == handles.bytes, "handle list rebuild differs")
    case .signedWriteCommand(_, let value, let signature):
        require(signature.count == 12, "signature of \(signature.count) octets")
        inside(value, bytes, "signed value")
    default:
        break
    }
}
