import BluewireATT
import BluewireCore

// ATT bearer rules, driven by a script of peer PDUs and local operations taken from the input.
//
// Input: a sequence of operations, each an operation byte followed by its operands:
//   0 receive a length-prefixed PDU from the peer      1 let time pass (byte × 250 ms)
//   2 queue a request (kind and handle from the input) 3 send a Write Command
//   4 notify                                           5 indicate
//   6 answer the peer's outstanding request            7 confirm a received indication
//   8 receive an Exchange MTU Request or Response      9 the connection drops
// (operation bytes are taken modulo 10; the PDU operation is the most frequent on purpose: 0, 10, 20…).
//
// Invariants checked (never a trap):
// - every PDU the bearer sends decodes and fits in ATT_MTU; 23 ≤ ATT_MTU ≤ the MTUs offered, and it
//   changes at most once;
// - at most one request and one indication outstanding on the wire at any time (§3.3.2);
// - every request and indication the owner queued ends exactly once (response, error, failure,
//   confirmation) by the time the connection drops: nothing hangs, nothing is reported twice;
// - every request the peer sends gets exactly one answer from the bearer or is surfaced exactly once;
// - after the bearer closes it sends nothing more.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    var harness = BearerHarness()
    var steps = 0
    while !input.isAtEnd && steps < 512 {
        steps += 1
        harness.step(&input)
    }
    harness.finish()
    return 0
}

struct BearerHarness {
    var bearer = ATTBearer(preferredMTU: 517, autoConfirmIndications: false)
    var now = MonotonicInstant(microseconds: 1_000_000)
    /// Requests queued and not yet sent, in order; the one on the wire.
    var unsentRequests: [ATTRequestID] = []
    var requestOnWire: ATTRequestID?
    var finishedRequests: Set<ATTRequestID> = []
    var unsentIndications: [ATTIndicationID] = []
    var indicationOnWire: ATTIndicationID?
    var finishedIndications: Set<ATTIndicationID> = []
    var peerRequestPending = false
    var receivedIndications = 0
    var closed = false
    var mtuChanges = 0
    /// The largest Client Rx MTU this side offered (the agreed ATT_MTU is at most this or 517).
    var largestOffer = 517

    mutating func step(_ input: inout FuzzInput) {
        let op = input.byte() % 10
        let mtuBefore = bearer.mtu
        var peerRequestOpcode: ATTOpcode?
        switch op {
        case 0:
            let pdu = input.lengthPrefixed()
            if let first = pdu.first, ATTOpcode(first).kind == .request || (ATTOpcode(first).kind == nil && first & 0x40 == 0) {
                peerRequestOpcode = ATTOpcode(first)
            }
            bearer.receive(pdu, now: now)
        case 1:
            now = now + .milliseconds(Int64(input.byte()) * 250)
            bearer.advanceTime(to: now)
        case 2:
            let request = makeRequest(&input)
            if case .exchangeMTURequest(let offer) = request { largestOffer = max(largestOffer, Int(offer)) }
            do {
                let id = try bearer.send(request: request, now: now)
                unsentRequests.append(id)
            } catch {
                require(bearer.isClosed || isTooLong(error), "send(request:) refused \(request) on an open bearer: \(error)")
            }
        case 3:
            let value = input.lengthPrefixed()
            do {
                try bearer.send(command: .writeCommand(handle: input.uint16(), value: value))
            } catch {
                require(bearer.isClosed || isTooLong(error), "Write Command refused on an open bearer: \(error)")
            }
        case 4:
            let handle = input.uint16()
            let value = input.lengthPrefixed16()
            do { try bearer.notify(handle: handle, value: value) } catch { require(bearer.isClosed, "notify refused on an open bearer: \(error)") }
        case 5:
            let handle = input.uint16()
            let value = input.lengthPrefixed16()
            do {
                let id = try bearer.indicate(handle: handle, value: value, now: now)
                unsentIndications.append(id)
            } catch {
                require(bearer.isClosed, "indicate refused on an open bearer: \(error)")
            }
        case 6:
            respond(&input)
        case 7:
            do {
                try bearer.confirmIndication()
                require(receivedIndications > 0, "confirmed an indication that never arrived")
                receivedIndications -= 1
            } catch {
                require(bearer.isClosed || receivedIndications == 0, "confirmIndication refused with \(receivedIndications) unconfirmed: \(error)")
            }
        case 8:
            let mtu = input.uint16()
            let request = input.bool()
            let pdu: ATTPDU = request ? .exchangeMTURequest(clientRxMTU: mtu) : .exchangeMTUResponse(serverRxMTU: mtu)
            if request { peerRequestOpcode = .exchangeMTURequest }
            bearer.receive(pdu.encode(), now: now)
        default:
            bearer.disconnected()
        }
        drain(mtuBefore: mtuBefore, peerRequest: peerRequestOpcode)
    }

    func isTooLong(_ error: ATTBearerError) -> Bool {
        if case .pduTooLong = error { return true }
        return false
    }

    mutating func makeRequest(_ input: inout FuzzInput) -> ATTPDU {
        let handle = input.uint16()
        switch input.byte() % 8 {
        case 0: return .readRequest(handle: handle)
        case 1: return .readBlobRequest(handle: handle, offset: input.uint16())
        case 2: return .writeRequest(handle: handle, value: input.lengthPrefixed())
        case 3: return .findInformationRequest(startingHandle: handle, endingHandle: input.uint16())
        case 4: return .readByGroupTypeRequest(startingHandle: handle, endingHandle: 0xFFFF, attributeGroupType: .primaryService)
        case 5: return .readByTypeRequest(startingHandle: handle, endingHandle: 0xFFFF, attributeType: .characteristic)
        case 6: return .prepareWriteRequest(handle: handle, offset: input.uint16(), partValue: input.lengthPrefixed())
        default: return .exchangeMTURequest(clientRxMTU: input.uint16())
        }
    }

    mutating func respond(_ input: inout FuzzInput) {
        let choice = input.byte()
        let value = input.lengthPrefixed16()
        // Try an answer that may or may not match; only a matching one may succeed.
        let candidates: [ATTPDU] = [
            .readResponse(value: value), .writeResponse, .readBlobResponse(value: value),
            .errorResponse(requestOpcode: ATTOpcode(choice), handle: 1, error: .attributeNotFound),
            .executeWriteResponse, .prepareWriteResponse(handle: 1, offset: 0, partValue: value.prefix(10)),
        ]
        let response = candidates[Int(choice) % candidates.count]
        do {
            try bearer.respond(response)
            require(peerRequestPending, "respond succeeded with no peer request pending")
            peerRequestPending = false
        } catch {
            switch error {
            case .noRequestToRespondTo: require(!peerRequestPending || bearer.isClosed, "the bearer forgot the peer's request")
            case .responseDoesNotMatchRequest, .pduTooLong, .closed, .disconnected: break
            default: require(false, "unexpected respond error \(error)")
            }
        }
    }

    mutating func drain(mtuBefore: Int, peerRequest: ATTOpcode?) {
        let mtu = bearer.mtu
        require(mtu >= ATTBearer.defaultMTU && mtu <= largestOffer, "ATT_MTU \(mtu)")
        if mtu != mtuBefore { mtuChanges += 1 }
        require(mtuChanges <= 1, "ATT_MTU changed \(mtuChanges) times")
        var answers = 0
        var surfaced = 0
        while let output = bearer.nextOutput() {
            switch output {
            case .send(let bytes):
                require(!closed, "sent \(bytes) after closing")
                require(bytes.count <= max(mtu, mtuBefore), "sent \(bytes.count) bytes with ATT_MTU \(mtu)")
                guard let pdu = try? ATTPDU(decoding: bytes) else {
                    require(false, "sent an undecodable PDU \(bytes)")
                    return
                }
                switch pdu.opcode.kind {
                case .request?:
                    require(requestOnWire == nil, "a second request went out while one is outstanding")
                    require(!unsentRequests.isEmpty, "a request went out that nobody queued")
                    requestOnWire = unsentRequests.removeFirst()
                case .indication?:
                    require(indicationOnWire == nil, "a second indication went out while one is outstanding")
                    require(!unsentIndications.isEmpty, "an indication went out that nobody queued")
                    indicationOnWire = unsentIndications.removeFirst()
                case .response?:
                    if case .errorResponse(let opcode, _, _) = pdu, opcode == peerRequest { answers += 1 }
                    if case .exchangeMTUResponse = pdu, peerRequest == .exchangeMTURequest { answers += 1 }
                default:
                    break
                }
            case .event(let event):
                handle(event, &surfaced)
            }
        }
        if let peerRequest, !closed {
            require(answers + surfaced == 1, "peer request \(peerRequest): \(answers) answer(s), \(surfaced) surfaced")
        }
        if !closed, bearer.pendingRequestCount > 0 || bearer.pendingIndicationCount > 0 {
            require(bearer.deadline != nil, "a transaction is pending with no deadline")
        }
    }

    mutating func handle(_ event: ATTBearerEvent, _ surfaced: inout Int) {
        switch event {
        case .response(let id, _):
            require(id == requestOnWire, "response for \(id), on the wire: \(String(describing: requestOnWire))")
            end(id)
        case .requestFailed(let id, _):
            if id == requestOnWire {
                end(id)
            } else if let index = unsentRequests.firstIndex(of: id) {
                unsentRequests.remove(at: index)
                require(finishedRequests.insert(id).inserted, "request \(id) ended twice")
            } else {
                require(false, "failure for unknown request \(id)")
            }
        case .indicationConfirmed(let id):
            require(id == indicationOnWire, "confirmation for \(id), on the wire: \(String(describing: indicationOnWire))")
            require(finishedIndications.insert(id).inserted, "indication \(id) ended twice")
            indicationOnWire = nil
        case .indicationFailed(let id, _):
            if id == indicationOnWire {
                indicationOnWire = nil
            } else if let index = unsentIndications.firstIndex(of: id) {
                unsentIndications.remove(at: index)
            } else {
                require(false, "failure for unknown indication \(id)")
            }
            require(finishedIndications.insert(id).inserted, "indication \(id) ended twice")
        case .request:
            surfaced += 1
            peerRequestPending = true
        case .indication:
            receivedIndications += 1
        case .closed:
            require(!closed, "closed twice")
            closed = true
            peerRequestPending = false
            receivedIndications = 0
        case .mtuChanged(let mtu):
            require(mtu == bearer.mtu, "mtuChanged(\(mtu)) but ATT_MTU is \(bearer.mtu)")
        case .notification, .multipleNotification, .command, .unexpectedPDU, .malformedPDU:
            break
        }
    }

    mutating func end(_ id: ATTRequestID) {
        require(finishedRequests.insert(id).inserted, "request \(id) ended twice")
        requestOnWire = nil
    }

    /// The connection drops: everything still pending must end now.
    mutating func finish() {
        let mtu = bearer.mtu
        bearer.disconnected()
        drain(mtuBefore: mtu, peerRequest: nil)
        require(closed, "the bearer did not close on disconnection")
        require(requestOnWire == nil && unsentRequests.isEmpty, "requests left hanging after disconnection")
        require(indicationOnWire == nil && unsentIndications.isEmpty, "indications left hanging after disconnection")
        require(bearer.pendingRequestCount == 0 && bearer.pendingIndicationCount == 0, "the bearer still counts pending work")
    }
}
