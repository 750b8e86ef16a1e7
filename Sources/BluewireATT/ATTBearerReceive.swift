import BluewireCore

extension ATTBearer {
    /// Handles one PDU received on the ATT channel at `now`. Values in the events it produces are
    /// slices of `bytes`.
    public mutating func receive(_ bytes: ArraySlice<UInt8>, now: MonotonicInstant) {
        try? checkTimeout(now)
        // A closed bearer takes part in no transaction any more (§3.3.3).
        guard closeReason == nil, let first = bytes.first else { return }
        let opcode = ATTOpcode(first)
        let pdu: ATTPDU
        do {
            pdu = try ATTPDU(decoding: bytes)
        } catch {
            receivedMalformed(opcode, error, now: now)
            return
        }
        switch opcode.kind {
        case .response?:
            receivedResponse(pdu, now: now)
        case .request?:
            receivedRequest(pdu)
        case .command?:
            emit(.command(pdu))
        case .notification?:
            if case .handleValueNotification(let handle, let value) = pdu {
                emit(.notification(handle: handle, value: value))
            } else if case .multipleHandleValueNotification(let notification) = pdu {
                emit(.multipleNotification(notification))
            }
        case .indication?:
            if case .handleValueIndication(let handle, let value) = pdu {
                emit(.indication(handle: handle, value: value))
                unconfirmedIndications += 1
                if autoConfirmIndications { try? confirmIndication() }
            }
        case .confirmation?:
            guard let indication = outstandingIndication else {
                emit(.unexpectedPDU(opcode))
                return
            }
            outstandingIndication = nil
            emit(.indicationConfirmed(indication.id))
            sendNextIndication(now: now)
        case nil:
            // §3.3.2 / §3.4.1.1: an unknown request gets Request Not Supported; an unknown command
            // (bit 6 set) is ignored.
            if opcode.isCommand {
                emit(.unexpectedPDU(opcode))
            } else {
                transmit(encoded(.errorResponse(requestOpcode: opcode, handle: 0, error: .requestNotSupported)))
            }
        }
    }

    /// Handles one PDU received on the ATT channel (array form).
    public mutating func receive(_ bytes: [UInt8], now: MonotonicInstant) {
        receive(bytes[...], now: now)
    }

    mutating func receivedResponse(_ pdu: ATTPDU, now: MonotonicInstant) {
        guard let outstanding = outstandingRequest, Self.answers(pdu, outstanding.request.opcode) else {
            emit(.unexpectedPDU(pdu.opcode))
            return
        }
        outstandingRequest = nil
        if case .exchangeMTUResponse(let serverRxMTU) = pdu, let clientRxMTU = outstanding.request.clientRxMTU {
            applyExchangedMTU(clientRx: clientRxMTU, serverRx: serverRxMTU)
        }
        emit(.response(outstanding.request.id, pdu))
        sendNextRequest(now: now)
    }

    static func answers(_ pdu: ATTPDU, _ request: ATTOpcode) -> Bool {
        if case .errorResponse(let requestOpcode, _, _) = pdu { return requestOpcode == request }
        return pdu.opcode == request.responseOpcode
    }

    mutating func receivedRequest(_ pdu: ATTPDU) {
        if case .exchangeMTURequest(let clientRxMTU) = pdu {
            // The server answers with its own Rx MTU; both sides then use the smaller one. The
            // response itself still goes out under the old MTU (§3.4.2.2).
            transmit(encoded(.exchangeMTUResponse(serverRxMTU: preferredMTU)))
            applyExchangedMTU(clientRx: clientRxMTU, serverRx: preferredMTU)
            return
        }
        peerRequest = pdu.opcode
        emit(.request(pdu))
    }

    mutating func applyExchangedMTU(clientRx: UInt16, serverRx: UInt16) {
        // Only the first exchange counts: ATT_MTU may not change again on this bearer (§3.4.2).
        guard !mtuExchanged else { return }
        mtuExchanged = true
        let agreed = Swift.max(ATTBearer.defaultMTU, Int(Swift.min(clientRx, serverRx)))
        if agreed != mtu {
            mtu = agreed
            emit(.mtuChanged(agreed))
        }
    }

    mutating func receivedMalformed(_ opcode: ATTOpcode, _ error: DecodeError, now: MonotonicInstant) {
        emit(.malformedPDU(error))
        switch opcode.kind {
        case .request?:
            // §3.4.1.1: a request that cannot be parsed is answered with Invalid PDU.
            transmit(encoded(.errorResponse(requestOpcode: opcode, handle: 0, error: .invalidPDU)))
        case .response?:
            // A broken answer to the outstanding request ends that transaction; otherwise drop it.
            guard let outstanding = outstandingRequest,
                  opcode == outstanding.request.opcode.responseOpcode || opcode == .errorResponse
            else { return }
            outstandingRequest = nil
            emit(.requestFailed(outstanding.request.id, .malformedResponse(error)))
            sendNextRequest(now: now)
        default:
            break
        }
    }
}
