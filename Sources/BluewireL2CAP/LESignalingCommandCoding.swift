import BluewireCore

extension LESignalingCommand {
    /// Decodes one signaling command (the payload of a C-frame on CID 0x0005). Fails (layer "l2cap")
    /// when the header is truncated, Length disagrees with the octets present, or a known command's
    /// fields are truncated or followed by extra octets.
    public init(decoding bytes: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(bytes, layer: "l2cap")
        let code = LESignalingCode(try r.readUInt8("Code"))
        identifier = try r.readUInt8("Identifier")
        let length = Int(try r.readUInt16("Length"))
        guard r.remainingCount == length else {
            throw DecodeError(.lengthMismatch(declared: length, actual: r.remainingCount),
                              layer: "l2cap", field: "Length", offset: 2)
        }
        switch code {
        case .commandReject:
            let reason = LESignalingRejectReason(rawValue: try r.readUInt16("Reason"))
            body = .commandReject(reason: reason, data: r.readRemaining())
        case .disconnectionRequest, .disconnectionResponse:
            let destination = try r.readUInt16("Destination CID")
            let source = try r.readUInt16("Source CID")
            body = code == .disconnectionRequest
                ? .disconnectionRequest(destinationCID: destination, sourceCID: source)
                : .disconnectionResponse(destinationCID: destination, sourceCID: source)
        case .connectionParameterUpdateRequest:
            body = .connectionParameterUpdateRequest(ConnectionParameterUpdate(
                intervalMin: try r.readUInt16("Interval Min"),
                intervalMax: try r.readUInt16("Interval Max"),
                latency: try r.readUInt16("Latency"),
                timeoutMultiplier: try r.readUInt16("Timeout")))
        case .connectionParameterUpdateResponse:
            body = .connectionParameterUpdateResponse(result: ConnectionParameterUpdateResult(rawValue: try r.readUInt16("Result")))
        case .leCreditBasedConnectionRequest:
            body = .leCreditBasedConnectionRequest(
                spsm: try r.readUInt16("SPSM"), sourceCID: try r.readUInt16("Source CID"),
                mtu: try r.readUInt16("MTU"), mps: try r.readUInt16("MPS"),
                initialCredits: try r.readUInt16("Initial Credits"))
        case .leCreditBasedConnectionResponse:
            body = .leCreditBasedConnectionResponse(
                destinationCID: try r.readUInt16("Destination CID"), mtu: try r.readUInt16("MTU"),
                mps: try r.readUInt16("MPS"), initialCredits: try r.readUInt16("Initial Credits"),
                result: LECreditBasedConnectionResult(rawValue: try r.readUInt16("Result")))
        case .flowControlCreditIndication:
            body = .flowControlCreditIndication(cid: try r.readUInt16("CID"), credits: try r.readUInt16("Credits"))
        case .creditBasedConnectionRequest:
            let spsm = try r.readUInt16("SPSM")
            let mtu = try r.readUInt16("MTU")
            let mps = try r.readUInt16("MPS")
            let credits = try r.readUInt16("Initial Credits")
            let offset = r.offset
            body = .creditBasedConnectionRequest(
                spsm: spsm, mtu: mtu, mps: mps, initialCredits: credits,
                sourceCIDs: try L2CAPCIDList(validating: r.readRemaining(), field: "Source CID", offset: offset))
        case .creditBasedConnectionResponse:
            let mtu = try r.readUInt16("MTU")
            let mps = try r.readUInt16("MPS")
            let credits = try r.readUInt16("Initial Credits")
            let result = CreditBasedConnectionResult(rawValue: try r.readUInt16("Result"))
            let offset = r.offset
            body = .creditBasedConnectionResponse(
                mtu: mtu, mps: mps, initialCredits: credits, result: result,
                destinationCIDs: try L2CAPCIDList(validating: r.readRemaining(), field: "Destination CID", offset: offset))
        case .creditBasedReconfigureRequest:
            let mtu = try r.readUInt16("MTU")
            let mps = try r.readUInt16("MPS")
            let offset = r.offset
            body = .creditBasedReconfigureRequest(
                mtu: mtu, mps: mps,
                destinationCIDs: try L2CAPCIDList(validating: r.readRemaining(), field: "Destination CID", offset: offset))
        case .creditBasedReconfigureResponse:
            body = .creditBasedReconfigureResponse(result: CreditBasedReconfigureResult(rawValue: try r.readUInt16("Result")))
        default:
            body = .other(code: code, data: r.readRemaining())
        }
        try r.expectEnd("Data")
    }

    public init(decoding bytes: [UInt8]) throws(DecodeError) {
        try self.init(decoding: bytes[...])
    }

    /// The command's wire form (the C-frame payload).
    public func encode() -> [UInt8] {
        var w = ByteWriter(capacity: 16)
        w.append(code.rawValue)
        w.append(identifier)
        w.append(UInt16(0))
        switch body {
        case .commandReject(let reason, let data):
            w.append(reason.rawValue)
            w.append(contentsOf: data)
        case .disconnectionRequest(let destination, let source), .disconnectionResponse(let destination, let source):
            w.append(destination)
            w.append(source)
        case .connectionParameterUpdateRequest(let p):
            w.append(p.intervalMin)
            w.append(p.intervalMax)
            w.append(p.latency)
            w.append(p.timeoutMultiplier)
        case .connectionParameterUpdateResponse(let result):
            w.append(result.rawValue)
        case .leCreditBasedConnectionRequest(let spsm, let source, let mtu, let mps, let credits):
            w.append(spsm)
            w.append(source)
            w.append(mtu)
            w.append(mps)
            w.append(credits)
        case .leCreditBasedConnectionResponse(let destination, let mtu, let mps, let credits, let result):
            w.append(destination)
            w.append(mtu)
            w.append(mps)
            w.append(credits)
            w.append(result.rawValue)
        case .flowControlCreditIndication(let cid, let credits):
            w.append(cid)
            w.append(credits)
        case .creditBasedConnectionRequest(let spsm, let mtu, let mps, let credits, let sources):
            w.append(spsm)
            w.append(mtu)
            w.append(mps)
            w.append(credits)
            w.append(contentsOf: sources.bytes)
        case .creditBasedConnectionResponse(let mtu, let mps, let credits, let result, let destinations):
            w.append(mtu)
            w.append(mps)
            w.append(credits)
            w.append(result.rawValue)
            w.append(contentsOf: destinations.bytes)
        case .creditBasedReconfigureRequest(let mtu, let mps, let destinations):
            w.append(mtu)
            w.append(mps)
            w.append(contentsOf: destinations.bytes)
        case .creditBasedReconfigureResponse(let result):
            w.append(result.rawValue)
        case .other(_, let data):
            w.append(contentsOf: data)
        }
        w.patch(UInt16(truncatingIfNeeded: w.count - 4), at: 2)
        return w.bytes
    }
}
