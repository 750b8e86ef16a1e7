import BluewireCore
import BluewireHCI
import BluewireL2CAP

// The LE signaling channel with credit based channels: CreditBasedChannelManager as responder and
// initiator, fed hostile C-frames and K-frames.
//
// Input: a script of steps. Each step is one opcode byte, then its operands:
// - 0: a length-prefixed signaling command (C-frame payload on CID 0x0005);
// - 1: a length-prefixed K-frame for local CID 0x0040 + (next byte & 0x3F);
// - 2: connect (LE) to PSM (next byte); 3: connect enhanced, count (next byte % 7);
// - 4: advance the clock by (next byte) × 100 ms; 5: read an SDU on the CID named by the next byte;
// - 6: send a length-prefixed SDU on the CID named by the next byte; 7: disconnect that CID.
// PSMs 0x0080 (open) and 0x0081 (authenticated) are registered; the link is unencrypted.
//
// Invariants checked (never a trap):
// - every command that decodes re-encodes to the received bytes;
// - every frame the manager sends on CID 0x0005 decodes, and its identifier is never 0;
// - it never answers a response or a Command Reject (two stacks must not loop);
// - every channel's local CID is in 0x0040–0x007F, credits in 0–65535, received bytes held at most
//   initial credits × MPS, and every K-frame it sends fits the peer's MPS and goes to a channel's
//   remote CID;
// - the signaling deadline is never in the past after `advanceTime`.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    var manager = CreditBasedChannelManager(role: input.bool() ? .central : .peripheral)
    try? manager.register(psm: SPSM(0x0080), service: .init(parameters: .init(mtu: 100, mps: 30, initialCredits: 8)))
    try? manager.register(psm: SPSM(0x0081), service: .init(security: .authenticated))
    var now = MonotonicInstant.zero
    var steps = 0
    while !input.isAtEnd && steps < 512 {
        steps += 1
        switch input.byte() % 8 {
        case 0:
            let payload = input.lengthPrefixed()
            if let command = try? LESignalingCommand(decoding: payload) {
                require(command.encode()[...] == payload, "command \(command) re-encodes differently")
            }
            manager.receive(channelID: .leSignaling, payload: payload, now: now)
            check(&manager, answering: payload)
        case 1:
            let cid = 0x0040 + UInt16(input.byte() & 0x3F)
            manager.receive(channelID: L2CAPChannelID(cid), payload: input.lengthPrefixed(), now: now)
        case 2:
            _ = try? manager.connect(psm: SPSM(UInt16(input.byte())), now: now)
        case 3:
            _ = try? manager.connectEnhanced(psm: SPSM(UInt16(input.byte())), count: Int(input.byte() % 7), now: now)
        case 4:
            now = now + .milliseconds(Int64(input.byte()) * 100)
            manager.advanceTime(to: now)
            if let deadline = manager.deadline { require(deadline > now, "deadline \(deadline) not after \(now)") }
        case 5:
            _ = manager.readSDU(on: 0x0040 + UInt16(input.byte() & 0x3F))
        case 6:
            let cid = 0x0040 + UInt16(input.byte() & 0x3F)
            try? manager.send(Array(input.lengthPrefixed()), on: cid)
        default:
            try? manager.disconnect(0x0040 + UInt16(input.byte() & 0x3F), now: now)
        }
        check(&manager, answering: nil)
    }
    return 0
}

func isResponseOrReject(_ code: LESignalingCode) -> Bool {
    switch code {
    case .commandReject, .connectionResponse, .configurationResponse, .disconnectionResponse, .echoResponse,
         .informationResponse, .connectionParameterUpdateResponse, .leCreditBasedConnectionResponse,
         .creditBasedConnectionResponse, .creditBasedReconfigureResponse:
        return true
    default:
        return false
    }
}

func check(_ manager: inout CreditBasedChannelManager, answering request: ArraySlice<UInt8>?) {
    var remoteCIDs: [UInt16: Int] = [:]
    for cid in manager.channelIDs {
        guard let channel = manager.channel(cid) else { continue }
        require((0x0040...0x007F).contains(cid), "local CID 0x\(cid) outside the LE range")
        require((0...65535).contains(channel.sendCredits) && (0...65535).contains(channel.receiveCredits), "credits out of range")
        require(channel.bufferedReceiveOctets <= channel.initialReceiveCredits * channel.localMPS,
                "channel holds \(channel.bufferedReceiveOctets) octets, more than credits × MPS")
        if channel.state != .connecting { remoteCIDs[channel.remoteCID] = channel.remoteMPS }
    }
    for output in manager.takeOutputs() {
        guard case .send(let frame) = output else { continue }
        if frame.channelID == .leSignaling {
            guard let command = try? LESignalingCommand(decoding: frame.payload) else {
                require(false, "sent a signaling command that does not decode")
                return
            }
            require(command.identifier != 0, "sent identifier 0")
            if let request, request.count >= 2, isResponseOrReject(LESignalingCode(request[request.startIndex])),
               command.code != .flowControlCreditIndication, command.code != .disconnectionRequest {
                require(!isResponseOrReject(command.code), "answered a response with \(command.code)")
            }
        } else {
            guard let mps = remoteCIDs[frame.channelID.rawValue] else {
                require(false, "K-frame to \(frame.channelID), no channel's remote CID")
                return
            }
            require(frame.payload.count <= mps, "K-frame of \(frame.payload.count) octets over MPS \(mps)")
        }
    }
}
