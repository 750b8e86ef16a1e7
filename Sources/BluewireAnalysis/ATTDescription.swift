import BluewireATT
import BluewireCore

/// Summaries of ATT PDUs (Core Vol 3 Part F §3.4) for the capture describer.
enum ATTDescription {
    static func describe(_ pdu: ArraySlice<UInt8>, into d: inout PacketDescription) {
        guard let first = pdu.first else {
            d.say("ATT (empty PDU)")
            return
        }
        let opcode = ATTOpcode(first)
        d.say("ATT " + opcode.description)
        d.addHex("att_opcode", first, digits: 2, shown: false)
        let decoded: ATTPDU
        do {
            decoded = try ATTPDU(decoding: pdu)
        } catch {
            d.fail(error)
            return
        }
        switch decoded {
        case .errorResponse(let request, let handle, let code):
            d.add("request", request.description)
            d.addHex("handle", handle)
            d.add("error", code.description)
        case .exchangeMTURequest(let mtu), .exchangeMTUResponse(let mtu):
            d.add("mtu", mtu)
        case .findInformationRequest(let start, let end):
            range(start, end, &d)
        case .findInformationResponse(let response):
            var items: [String] = []
            for entry in response.entries { items.append(handleText(entry.handle) + " " + entry.type.description) }
            d.add("information", .strings(items))
        case .findByTypeValueRequest(let start, let end, let type, let value):
            range(start, end, &d)
            d.add("type", BluetoothUUID(type).description)
            d.add("value", hexString(value))
        case .findByTypeValueResponse(let response):
            var items: [String] = []
            for entry in response.entries {
                items.append(handleText(entry.foundAttributeHandle) + "-" + handleText(entry.groupEndHandle))
            }
            d.add("handles", .strings(items))
        case .readByTypeRequest(let start, let end, let type), .readByGroupTypeRequest(let start, let end, let type):
            range(start, end, &d)
            d.add("type", type.description)
        case .readByTypeResponse(let response):
            var items: [String] = []
            for entry in response.entries { items.append(handleText(entry.handle) + ":" + hexString(entry.value)) }
            d.add("attributes", .strings(items))
        case .readByGroupTypeResponse(let response):
            var items: [String] = []
            for entry in response.entries {
                items.append(handleText(entry.handle) + "-" + handleText(entry.endGroupHandle) + ":"
                    + uuidOrHex(entry.value))
            }
            d.add("groups", .strings(items))
        case .readRequest(let handle):
            d.addHex("handle", handle)
        case .readBlobRequest(let handle, let offset):
            d.addHex("handle", handle)
            d.add("offset", offset)
        case .readResponse(let value), .readBlobResponse(let value), .readMultipleResponse(let value):
            d.add("value", hexString(value))
        case .readMultipleRequest(let list), .readMultipleVariableRequest(let list):
            var items: [String] = []
            for handle in list { items.append(handleText(handle)) }
            d.add("handles", .strings(items))
        case .readMultipleVariableResponse(let response):
            var items: [String] = []
            for entry in response.entries { items.append(hexString(entry.value)) }
            d.add("values", .strings(items))
        case .writeRequest(let handle, let value), .writeCommand(let handle, let value),
             .handleValueNotification(let handle, let value), .handleValueIndication(let handle, let value):
            d.addHex("handle", handle)
            d.add("value", hexString(value))
        case .signedWriteCommand(let handle, let value, let signature):
            d.addHex("handle", handle)
            d.add("value", hexString(value))
            d.add("authentication_signature", hexString(signature))
        case .prepareWriteRequest(let handle, let offset, let part), .prepareWriteResponse(let handle, let offset, let part):
            d.addHex("handle", handle)
            d.add("offset", offset)
            d.add("value", hexString(part))
        case .executeWriteRequest(let flags):
            d.add("flags", flags.rawValue)
        case .multipleHandleValueNotification(let notification):
            var items: [String] = []
            for entry in notification.entries { items.append(handleText(entry.handle) + ":" + hexString(entry.value)) }
            d.add("values", .strings(items))
        case .writeResponse, .executeWriteResponse, .handleValueConfirmation:
            break
        case .unknown(_, let parameters):
            d.add("parameters", hexString(parameters))
        }
    }

    static func range(_ start: UInt16, _ end: UInt16, _ d: inout PacketDescription) {
        d.addHex("start", start)
        d.addHex("end", end)
    }

    static func handleText(_ handle: UInt16) -> String { "0x" + hex(handle, width: 4) }

    /// A group value is a service UUID in the usual (primary/secondary service) discovery.
    static func uuidOrHex(_ value: ArraySlice<UInt8>) -> String {
        if value.count == 2 || value.count == 16, let uuid = BluetoothUUID(littleEndian: value) {
            return uuid.description
        }
        return hexString(value)
    }
}
