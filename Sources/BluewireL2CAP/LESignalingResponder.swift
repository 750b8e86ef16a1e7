import BluewireCore

/// What the LE signaling channel produced for one received command: a reply to send back on CID
/// 0x0005 (if any) and something for the host to act on (if any).
public struct LESignalingOutput: Hashable, Sendable {
    /// The command to send to the peer (encode it with `encode()`).
    public var reply: LESignalingCommand?
    public var event: LESignalingEvent?

    @inlinable
    public init(reply: LESignalingCommand? = nil, event: LESignalingEvent? = nil) {
        self.reply = reply
        self.event = event
    }
}

/// Signaling outcomes the host must know about.
public enum LESignalingEvent: Hashable, Sendable {
    /// Central: the peripheral asked for these parameters and they were accepted; the host must now
    /// issue HCI LE Connection Update with them (Vol 3 Part A §4.20: "the Central shall ... initiate
    /// the Connection Update procedure").
    case updateConnectionParameters(ConnectionParameterUpdate)
    /// Central: the peripheral's request was refused because its values are out of range.
    case connectionParameterUpdateRejected(ConnectionParameterUpdate)
    /// Peripheral: the central answered our Connection Parameter Update Request.
    case connectionParameterUpdateResponse(ConnectionParameterUpdateResult)
    /// The peer rejected a command we sent.
    case commandRejected(identifier: UInt8, reason: LESignalingRejectReason)
    /// A command that could not be decoded; answered with Command Reject when it was a request.
    case malformedCommand(DecodeError)
    /// A well-formed command that needed nothing (an unmatched response, a credit indication for a
    /// channel that does not exist). Reported for diagnostics.
    case ignored(LESignalingCode)
}

/// Answers the peer on the LE signaling channel (Core Vol 3 Part A §4), sans-I/O.
///
/// On its own it opens no credit based channels: requests for them are refused with the proper
/// response, a Disconnection Request names an invalid CID, and anything else that is not a
/// response is answered with Command Reject "command not understood" (§4.1). A link that offers
/// credit based channels uses `CreditBasedChannelManager`, which embeds this responder for the rest. A central accepts a
/// valid Connection Parameter Update Request and tells the host to apply it; a peripheral may not
/// receive one and rejects it as not understood (§4.20).
public struct LESignalingResponder: Sendable {
    public enum Role: Hashable, Sendable { case central, peripheral }

    /// The local device's role on this connection.
    public let role: Role
    var nextIdentifier: UInt8 = 1
    var pendingUpdateIdentifier: UInt8?

    public init(role: Role) {
        self.role = role
    }

    /// Peripheral: builds a Connection Parameter Update Request to send on CID 0x0005. Nil when the
    /// local device is central (only a peripheral may send it, §4.20).
    public mutating func requestConnectionParameterUpdate(_ parameters: ConnectionParameterUpdate) -> LESignalingCommand? {
        guard role == .peripheral else { return nil }
        let identifier = allocateIdentifier()
        pendingUpdateIdentifier = identifier
        return LESignalingCommand(identifier: identifier, body: .connectionParameterUpdateRequest(parameters))
    }

    /// Handles one received C-frame payload.
    public mutating func receive(_ payload: ArraySlice<UInt8>) -> LESignalingOutput {
        let command: LESignalingCommand
        do {
            command = try LESignalingCommand(decoding: payload)
        } catch {
            return malformed(payload, error)
        }
        // Identifier 0x00 is illegal in every command (§4); answering could confuse the peer further.
        guard command.identifier != 0 else { return LESignalingOutput(event: .ignored(command.code)) }
        let id = command.identifier
        switch command.body {
        case .connectionParameterUpdateRequest(let parameters):
            guard role == .central else { return reject(id) }
            let valid = parameters.isValid
            let reply = LESignalingCommand(
                identifier: id, body: .connectionParameterUpdateResponse(result: valid ? .accepted : .rejected))
            return LESignalingOutput(
                reply: reply,
                event: valid ? .updateConnectionParameters(parameters) : .connectionParameterUpdateRejected(parameters))
        case .connectionParameterUpdateResponse(let result):
            guard pendingUpdateIdentifier == id else { return LESignalingOutput(event: .ignored(command.code)) }
            pendingUpdateIdentifier = nil
            return LESignalingOutput(event: .connectionParameterUpdateResponse(result))
        case .commandReject(let reason, _):
            if pendingUpdateIdentifier == id { pendingUpdateIdentifier = nil }
            return LESignalingOutput(event: .commandRejected(identifier: id, reason: reason))
        case .disconnectionRequest(let destination, let source):
            // No dynamic channel exists, so the destination CID is invalid (§4.6): data is the
            // local CID (the request's destination) then the remote CID (its source).
            var data = ByteWriter(capacity: 4)
            data.append(destination)
            data.append(source)
            return LESignalingOutput(reply: LESignalingCommand(
                identifier: id, body: .commandReject(reason: .invalidCIDInRequest, data: data.bytes[...])))
        case .leCreditBasedConnectionRequest:
            // 0x0002: connection refused – SPSM not supported (§4.23, Table 4.14).
            return LESignalingOutput(reply: LESignalingCommand(
                identifier: id,
                body: .leCreditBasedConnectionResponse(destinationCID: 0, mtu: 0, mps: 0, initialCredits: 0, result: .spsmNotSupported)))
        case .creditBasedConnectionRequest(_, _, _, _, let sources):
            // 0x0002: all connections refused – SPSM not supported; one 0x0000 per requested CID (§4.26).
            return LESignalingOutput(reply: LESignalingCommand(
                identifier: id,
                body: .creditBasedConnectionResponse(
                    mtu: 0, mps: 0, initialCredits: 0, result: .allRefusedSPSMNotSupported,
                    destinationCIDs: L2CAPCIDList(Array(repeating: UInt16(0), count: sources.count)))))
        case .creditBasedReconfigureRequest:
            // 0x0003: reconfiguration failed – one or more Destination CIDs invalid (§4.28).
            return LESignalingOutput(reply: LESignalingCommand(identifier: id, body: .creditBasedReconfigureResponse(result: .destinationCIDsInvalid)))
        case .disconnectionResponse, .leCreditBasedConnectionResponse, .flowControlCreditIndication,
             .creditBasedConnectionResponse, .creditBasedReconfigureResponse:
            return LESignalingOutput(event: .ignored(command.code))
        case .other(let code, _):
            return Self.isResponse(code) ? LESignalingOutput(event: .ignored(code)) : reject(id)
        }
    }

    func reject(_ identifier: UInt8) -> LESignalingOutput {
        LESignalingOutput(reply: LESignalingCommand(
            identifier: identifier, body: .commandReject(reason: .commandNotUnderstood, data: [])))
    }

    func malformed(_ payload: ArraySlice<UInt8>, _ error: DecodeError) -> LESignalingOutput {
        guard payload.count >= 2 else { return LESignalingOutput(event: .malformedCommand(error)) }
        let code = LESignalingCode(payload[payload.startIndex])
        let identifier = payload[payload.startIndex + 1]
        // Never answer a response or a reject with a reject: two stacks could loop forever.
        guard identifier != 0, !Self.isResponse(code), code != .commandReject else {
            return LESignalingOutput(event: .malformedCommand(error))
        }
        var out = reject(identifier)
        out.event = .malformedCommand(error)
        return out
    }

    /// Responses and indications, which must never be rejected.
    static func isResponse(_ code: LESignalingCode) -> Bool {
        switch code {
        case .commandReject, .connectionResponse, .configurationResponse, .disconnectionResponse, .echoResponse,
             .informationResponse, .connectionParameterUpdateResponse, .leCreditBasedConnectionResponse,
             .flowControlCreditIndication, .creditBasedConnectionResponse, .creditBasedReconfigureResponse:
            return true
        default:
            return false
        }
    }

    mutating func allocateIdentifier() -> UInt8 {
        let id = nextIdentifier
        nextIdentifier = nextIdentifier == 255 ? 1 : nextIdentifier + 1
        return id
    }
}
