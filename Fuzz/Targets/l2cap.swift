import BluewireCore
import BluewireHCI
import BluewireL2CAP

// L2CAP reassembly and the LE signaling channel, fed the ACL packets a controller delivers.
//
// Input: one configuration byte, then HCI ACL Data packets back to back as on the wire (4-byte
// header, Data_Total_Length octets). A packet whose length runs past the input gets the rest of it.
// Configuration: bits 0–1 pick the reassembler's maximum PDU size (65,539 / 1,024 / 251 / 27),
// bits 2–7 the ACL buffer size used to re-fragment complete PDUs (1 + 4 × value, raised for large PDUs
// so that none needs more than about 32 fragments).
//
// Invariants checked (never a trap):
// - ACL packets decode exactly when their length field is right, and re-encode to the same bytes;
// - `wholePDU(inPacket:)` (the receive fast path) gives exactly the PDU `receive` gives, with no
//   error, or declines;
// - a complete PDU never exceeds the reassembler's maximum, and a single-packet PDU is a slice of
//   that packet (zero copy);
// - every complete PDU, fragmented again with L2CAPFragmenter and fed to a fresh reassembler, comes
//   out identical from the last fragment, with no error on the way;
// - LE signaling commands on CID 0x0005: decode → encode gives the received bytes; the responders (as
//   central and as peripheral) answer with a command that decodes, carries the request's identifier,
//   and never answer a response or a Command Reject (two stacks must not loop).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let config = input.byte()
    let maxima = [65_535 + 4, 1_024, 251, 27]
    var reassembler = L2CAPReassembler(maximumPDUSize: maxima[Int(config & 3)])
    let fragmenter = L2CAPFragmenter(bufferSize: 1 + 4 * Int(config >> 2))
    var central = LESignalingResponder(role: .central)
    var peripheral = LESignalingResponder(role: .peripheral)
    var packets = 0
    while !input.isAtEnd && packets < 256 {
        packets += 1
        let start = input.index
        let header = input.take(4)
        var length = 0
        if header.count == 4 { length = Int(header[header.startIndex + 2]) | Int(header[header.startIndex + 3]) << 8 }
        _ = input.take(length)
        let raw = input.bytes[start..<input.index]
        // The receive fast path, taken before the full rules see the packet (as the host engine does):
        // whatever it returns must be their PDU, and it must decline what they refuse.
        let fast = reassembler.wholePDU(inPacket: raw)
        let packet: ACLPacket
        do {
            packet = try ACLPacket(decoding: raw)
        } catch {
            require(raw.count != 4 + length || header.count < 4, "ACL packet with a correct length failed: \(error)")
            require(fast == nil, "the fast path took a packet that does not decode")
            continue
        }
        require(packet.encode()[...] == raw, "ACL packet re-encodes differently")
        let result = reassembler.receive(packet)
        if let fast {
            require(result.pdu == fast && result.error == nil, "the fast path's PDU \(fast) differs from \(result)")
        }
        guard let pdu = result.pdu else { continue }
        require(pdu.handle == packet.handle, "PDU on handle \(pdu.handle) from a packet on \(packet.handle)")
        require(pdu.payload.count + 4 <= reassembler.maximumPDUSize, "PDU of \(pdu.payload.count) octets over the maximum")
        if packet.packetBoundary.isStart && result.error == nil && !reassembler.isReassembling(handle: packet.handle),
           packet.data.count == pdu.payload.count + 4 {
            require(pdu.payload.startIndex >= raw.startIndex && pdu.payload.endIndex <= raw.endIndex,
                    "single-fragment PDU is not a slice of its packet")
        }
        checkRefragmenting(pdu, fragmenter, maximum: reassembler.maximumPDUSize)
        if pdu.channelID == .leSignaling {
            checkSignaling(pdu.payload, &central)
            checkSignaling(pdu.payload, &peripheral)
        }
    }
    return 0
}

func checkRefragmenting(_ pdu: L2CAPPDU, _ configured: L2CAPFragmenter, maximum: Int) {
    // At most about 32 fragments, so that a large PDU in tiny buffers does not slow the fuzzer down.
    let fragmenter = L2CAPFragmenter(bufferSize: max(configured.bufferSize, (pdu.payload.count + 4) / 32))
    let fragments = fragmenter.fragment(handle: pdu.handle, channelID: pdu.channelID, payload: pdu.payload)
    require(!fragments.isEmpty, "no fragments")
    var fresh = L2CAPReassembler(maximumPDUSize: maximum)
    for (i, fragment) in fragments.enumerated() {
        require(fragment.data.count <= fragmenter.bufferSize, "fragment of \(fragment.data.count) > buffer \(fragmenter.bufferSize)")
        let result = fresh.receive(fragment)
        require(result.error == nil, "re-fragmented PDU gave \(String(describing: result.error))")
        if i == fragments.count - 1 {
            require(result.pdu == pdu, "re-fragmented PDU differs: \(String(describing: result.pdu)) vs \(pdu)")
        } else {
            require(result.pdu == nil, "re-fragmented PDU completed early at fragment \(i)")
        }
    }
    require(!fresh.isReassembling(handle: pdu.handle), "reassembler still holds data after a whole PDU")
}

func isResponseOrReject(_ code: UInt8) -> Bool {
    switch LESignalingCode(code) {
    case .commandReject, .connectionResponse, .configurationResponse, .disconnectionResponse, .echoResponse,
         .informationResponse, .connectionParameterUpdateResponse, .leCreditBasedConnectionResponse,
         .flowControlCreditIndication, .creditBasedConnectionResponse, .creditBasedReconfigureResponse:
        return true
    default:
        return false
    }
}

func checkSignaling(_ payload: ArraySlice<UInt8>, _ responder: inout LESignalingResponder) {
    if let command = try? LESignalingCommand(decoding: payload) {
        require(command.encode()[...] == payload, "signaling command \(command) re-encodes differently")
    }
    let output = responder.receive(payload)
    guard let reply = output.reply else { return }
    require(payload.count >= 2, "replied to a \(payload.count)-octet command")
    let code = payload[payload.startIndex]
    let identifier = payload[payload.startIndex + 1]
    require(!isResponseOrReject(code), "answered a response or reject (code 0x\(code)) with \(reply)")
    require(identifier != 0, "answered a command with identifier 0")
    require(reply.identifier == identifier, "reply identifier \(reply.identifier) for request \(identifier)")
    let bytes = reply.encode()
    guard let decoded = try? LESignalingCommand(decoding: bytes[...]) else {
        require(false, "reply \(reply) does not decode")
        return
    }
    require(decoded == reply, "reply round trip differs")
    require(isResponseOrReject(reply.code.rawValue), "reply \(reply.code) is not a response")
}
