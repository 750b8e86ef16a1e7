import BluewireCore

/// The rules of one ATT bearer (one LE connection's ATT fixed channel), Core Vol 3 Part F §3.3,
/// sans-I/O: PDUs and the current time go in, PDUs to send and events come out (`nextOutput()`),
/// and `deadline` says when to call `advanceTime(to:)` if nothing else happens.
///
/// - Client side: at most one request outstanding (§3.3.2); later requests wait in order and go out
///   when the response (or Error Response naming the request's opcode) arrives. A response that
///   matches nothing is dropped and reported.
/// - Server side: at most one indication outstanding until its Handle Value Confirmation (§3.3.2);
///   later indications wait in order. Requests from the peer are surfaced for the GATT server.
/// - ATT_MTU: 23 until an Exchange MTU (either direction) sets min(client Rx MTU, server Rx MTU),
///   never below 23 (§3.4.2). Outgoing PDUs never exceed it: notification and indication values and
///   read response values are cut as the specification allows (§3.4.4.4, §3.4.7.1, Vol 3 Part G
///   §4.10), anything else that is too long is refused.
/// - A request or indication not answered within 30 s times the transaction out; the bearer is then
///   closed and nothing more may be sent on it (§3.3.3).
public struct ATTBearer: Sendable {
    /// The ATT_MTU every LE bearer starts with (§3.2.8, "ATT_MTU shall be 23" by default on LE).
    public static let defaultMTU = 23
    /// The transaction timeout (§3.3.3).
    public static let transactionTimeout = TimeSpan.seconds(30)

    /// The largest PDU either side may send now.
    public internal(set) var mtu: Int = ATTBearer.defaultMTU
    /// The Rx MTU this device offers in an MTU exchange (client request or server response).
    public let preferredMTU: UInt16
    /// Whether a received indication is confirmed at once, right after it is reported.
    public let autoConfirmIndications: Bool
    /// Octets reserved, zeroed, in front of each PDU in `.send` (see `init`).
    public let headroom: Int
    /// Set after a transaction timeout or disconnection.
    public internal(set) var closeReason: ATTBearerCloseReason?
    @inlinable public var isClosed: Bool { closeReason != nil }

    struct PendingRequest: Sendable {
        var id: ATTRequestID
        var opcode: ATTOpcode
        var bytes: [UInt8]
        var clientRxMTU: UInt16?
    }

    struct PendingIndication: Sendable {
        var id: ATTIndicationID
        var bytes: [UInt8]
    }

    var outstandingRequest: (request: PendingRequest, deadline: MonotonicInstant)?
    var queuedRequests: [PendingRequest] = []
    var outstandingIndication: (id: ATTIndicationID, deadline: MonotonicInstant)?
    var queuedIndications: [PendingIndication] = []
    /// The peer's request the local server has not answered yet.
    var peerRequest: ATTOpcode?
    /// Indications received and not yet confirmed (when confirming by hand).
    var unconfirmedIndications = 0
    var mtuExchanged = false
    var nextRequestID: UInt64 = 1
    var nextIndicationID: UInt64 = 1
    var outputs: [ATTBearerOutput] = []
    var outputHead = 0

    /// - Parameters:
    ///   - preferredMTU: the Rx MTU to offer (at least 23; 517 fits the longest attribute value).
    ///   - autoConfirmIndications: confirm received indications as soon as they are reported.
    ///   - headroom: octets the bearer leaves, zeroed, in front of each PDU it hands out in `.send`
    ///     (0: the PDU alone). A caller that puts headers in front of the PDU reserves their room
    ///     here, so each PDU is encoded once, into the buffer that goes on the wire: the host engine
    ///     reserves `L2CAPFragmenter.headroom` (the ACL and L2CAP headers) and writes them in place.
    public init(preferredMTU: UInt16 = 517, autoConfirmIndications: Bool = true, headroom: Int = 0) {
        self.preferredMTU = Swift.max(preferredMTU, UInt16(ATTBearer.defaultMTU))
        self.autoConfirmIndications = autoConfirmIndications
        self.headroom = Swift.max(headroom, 0)
    }

    /// The earliest instant at which a transaction times out, if one is running.
    public var deadline: MonotonicInstant? {
        switch (outstandingRequest?.deadline, outstandingIndication?.deadline) {
        case (let a?, let b?): return Swift.min(a, b)
        case (let a?, nil): return a
        case (nil, let b?): return b
        case (nil, nil): return nil
        }
    }

    /// Requests sent or waiting, and whether one is outstanding.
    public var pendingRequestCount: Int { queuedRequests.count + (outstandingRequest == nil ? 0 : 1) }
    /// Indications sent or waiting.
    public var pendingIndicationCount: Int { queuedIndications.count + (outstandingIndication == nil ? 0 : 1) }

    // MARK: Output

    /// The next PDU to send or event to handle, in the order they arose; nil when there is none.
    public mutating func nextOutput() -> ATTBearerOutput? {
        // Moved out, not copied (an empty `.send` is left behind, which costs nothing to destroy).
        outputs.takeFront(at: &outputHead, leaving: .send([]))
    }

    /// Every pending output, in order.
    public mutating func takeOutputs() -> [ATTBearerOutput] {
        var taken: [ATTBearerOutput] = []
        while let output = nextOutput() { taken.append(output) }
        return taken
    }

    mutating func emit(_ event: ATTBearerEvent) { outputs.append(.event(event)) }
    /// Hands out a PDU already encoded by `encoded(_:)` (so with `headroom` in front).
    mutating func transmit(_ bytes: [UInt8]) { outputs.append(.send(bytes)) }

    /// `pdu`'s wire form behind `headroom` zeroed octets, in one allocation.
    func encoded(_ pdu: ATTPDU) -> [UInt8] {
        var w = headroomWriter(capacity: pdu.capacityHint)
        pdu.encode(into: &w)
        return w.bytes
    }

    /// The first `limit` octets of an encoded PDU (opcode first) behind `headroom` zeroed octets, in
    /// one allocation; `pdu` itself when there is no headroom and nothing to cut.
    func withHeadroom(_ pdu: [UInt8], upTo limit: Int) -> [UInt8] {
        guard headroom > 0 || pdu.count > limit else { return pdu }
        var w = headroomWriter(capacity: Swift.min(pdu.count, limit))
        w.append(contentsOf: pdu.prefix(limit))
        return w.bytes
    }

    /// A writer holding `headroom` zeroed octets, with room for `capacity` more.
    func headroomWriter(capacity: Int) -> ByteWriter {
        var w = ByteWriter(capacity: headroom + capacity)
        for _ in 0..<headroom { w.append(UInt8(0)) }
        return w
    }

    // MARK: Client side

    /// Queues a request (any PDU whose opcode is a request). It is sent at once if no request is
    /// outstanding, otherwise after the ones before it have been answered.
    public mutating func send(request: ATTPDU, now: MonotonicInstant) throws(ATTBearerError) -> ATTRequestID {
        try checkTimeout(now)
        if let reason = closeReason { throw reason == .disconnected ? .disconnected : .closed }
        guard request.opcode.kind == .request else { throw .notARequest(request.opcode) }
        let bytes = encoded(request)
        guard bytes.count - headroom <= mtu else { throw .pduTooLong(length: bytes.count - headroom, mtu: mtu) }
        var clientRxMTU: UInt16?
        if case .exchangeMTURequest(let value) = request { clientRxMTU = value }
        let id = ATTRequestID(rawValue: nextRequestID)
        nextRequestID += 1
        queuedRequests.append(PendingRequest(id: id, opcode: request.opcode, bytes: bytes, clientRxMTU: clientRxMTU))
        sendNextRequest(now: now)
        return id
    }

    /// Queues an Exchange MTU Request offering `preferredMTU` (a client sends it at most once, §3.4.2.1).
    public mutating func exchangeMTU(now: MonotonicInstant) throws(ATTBearerError) -> ATTRequestID {
        try send(request: .exchangeMTURequest(clientRxMTU: preferredMTU), now: now)
    }

    /// Sends a command (Write Command, Signed Write Command) at once: commands need no response and
    /// are not held back by an outstanding request (§3.3.2).
    public mutating func send(command: ATTPDU) throws(ATTBearerError) {
        if let reason = closeReason { throw reason == .disconnected ? .disconnected : .closed }
        guard command.opcode.kind == .command else { throw .notACommand(command.opcode) }
        let bytes = encoded(command)
        guard bytes.count - headroom <= mtu else { throw .pduTooLong(length: bytes.count - headroom, mtu: mtu) }
        transmit(bytes)
    }

    /// Sends the Handle Value Confirmation for a received indication (when not confirming automatically).
    public mutating func confirmIndication() throws(ATTBearerError) {
        if let reason = closeReason { throw reason == .disconnected ? .disconnected : .closed }
        guard unconfirmedIndications > 0 else { throw .noIndicationToConfirm }
        unconfirmedIndications -= 1
        transmit(encoded(.handleValueConfirmation))
    }

    mutating func sendNextRequest(now: MonotonicInstant) {
        guard outstandingRequest == nil, !queuedRequests.isEmpty else { return }
        var next = queuedRequests.removeFirst()
        // The PDU moves to the output; the outstanding request keeps only what matches its answer,
        // so the PDU's buffer has one owner and the engine writes its headers into it in place.
        let bytes = next.bytes
        next.bytes = []
        outstandingRequest = (next, now + ATTBearer.transactionTimeout)
        transmit(bytes)
    }

    // MARK: Server side

    /// Answers the peer's outstanding request with its response or an Error Response. Read, Read
    /// Blob and Read Multiple Response values longer than ATT_MTU − 1 are cut to fit (§3.4.4.4,
    /// §3.4.4.6, §3.4.4.8); any other response must already fit.
    public mutating func respond(_ response: ATTPDU) throws(ATTBearerError) {
        if let reason = closeReason { throw reason == .disconnected ? .disconnected : .closed }
        guard let request = peerRequest else { throw .noRequestToRespondTo }
        let matches: Bool
        if case .errorResponse(let requestOpcode, _, _) = response {
            // The Error Response names the request it answers (§3.4.1.1).
            matches = requestOpcode == request
        } else {
            matches = response.opcode == request.responseOpcode
        }
        guard matches else { throw .responseDoesNotMatchRequest(request: request, response: response.opcode) }
        var pdu = response
        let room = mtu - 1
        switch response {
        case .readResponse(let value) where value.count > room: pdu = .readResponse(value: value.prefix(room))
        case .readBlobResponse(let value) where value.count > room: pdu = .readBlobResponse(value: value.prefix(room))
        case .readMultipleResponse(let values) where values.count > room: pdu = .readMultipleResponse(values: values.prefix(room))
        default: break
        }
        let bytes = encoded(pdu)
        guard bytes.count - headroom <= mtu else { throw .pduTooLong(length: bytes.count - headroom, mtu: mtu) }
        peerRequest = nil
        transmit(bytes)
    }

    /// Sends a Handle Value Notification. A value longer than ATT_MTU − 3 is cut to that length:
    /// only the first ATT_MTU − 3 octets can be sent (Vol 3 Part G §4.10).
    public mutating func notify(handle: UInt16, value: ArraySlice<UInt8>) throws(ATTBearerError) {
        if let reason = closeReason { throw reason == .disconnected ? .disconnected : .closed }
        transmit(encoded(.handleValueNotification(handle: handle, value: value.prefix(mtu - 3))))
    }

    /// Sends a Handle Value Notification that is already encoded (opcode 0x1B, handle, value), as
    /// the GATT server builds it for this bearer's MTU, so the streaming path encodes it once. Like
    /// `notify(handle:value:)`, a PDU longer than ATT_MTU has its value cut to ATT_MTU − 3
    /// (Vol 3 Part G §4.11). A Multiple Handle Value Notification (0x23) goes as it is, or is
    /// refused (`pduTooLong`) if longer than ATT_MTU, since its tuples cannot be cut. Anything else
    /// than a notification is refused (`notACommand`): the
    /// bearer's rules for requests and indications must not be bypassed.
    public mutating func notify(encoded pdu: [UInt8]) throws(ATTBearerError) {
        if let reason = closeReason { throw reason == .disconnected ? .disconnected : .closed }
        guard pdu.count >= 3 else { throw .notACommand(ATTOpcode(pdu.first ?? 0)) }
        switch ATTOpcode(pdu[0]) {
        case .handleValueNotification:
            transmit(withHeadroom(pdu, upTo: mtu))
        case .multipleHandleValueNotification:
            // Tuples are whole (Part F §3.4.7.4): a PDU longer than ATT_MTU cannot be cut, only refused.
            guard pdu.count <= mtu else { throw .pduTooLong(length: pdu.count, mtu: mtu) }
            transmit(withHeadroom(pdu, upTo: mtu))
        default:
            throw .notACommand(ATTOpcode(pdu[0]))
        }
    }

    /// Sends a Handle Value Indication, or queues it while another awaits its confirmation. A value
    /// longer than ATT_MTU − 3 is cut to that length (Vol 3 Part G §4.11).
    public mutating func indicate(handle: UInt16, value: ArraySlice<UInt8>, now: MonotonicInstant) throws(ATTBearerError) -> ATTIndicationID {
        try checkTimeout(now)
        if let reason = closeReason { throw reason == .disconnected ? .disconnected : .closed }
        let id = ATTIndicationID(rawValue: nextIndicationID)
        nextIndicationID += 1
        let bytes = encoded(.handleValueIndication(handle: handle, value: value.prefix(mtu - 3)))
        queuedIndications.append(PendingIndication(id: id, bytes: bytes))
        sendNextIndication(now: now)
        return id
    }

    mutating func sendNextIndication(now: MonotonicInstant) {
        guard outstandingIndication == nil, !queuedIndications.isEmpty else { return }
        let next = queuedIndications.removeFirst()
        outstandingIndication = (next.id, now + ATTBearer.transactionTimeout)
        transmit(next.bytes)
    }

    // MARK: Time and connection

    /// Tells the bearer the time is now `now`: a transaction past its deadline times out and closes
    /// the bearer (§3.3.3).
    public mutating func advanceTime(to now: MonotonicInstant) {
        try? checkTimeout(now)
    }

    /// The connection ended: every pending request and indication fails and the bearer closes.
    public mutating func disconnected() {
        guard closeReason == nil else { return }
        close(.disconnected, requestError: .disconnected, indicationError: .disconnected, queuedError: .disconnected)
    }

    mutating func checkTimeout(_ now: MonotonicInstant) throws(ATTBearerError) {
        guard closeReason == nil, let deadline, now >= deadline else { return }
        let requestExpired = outstandingRequest.map { $0.deadline <= now } ?? false
        let indicationExpired = outstandingIndication.map { $0.deadline <= now } ?? false
        let opcode = requestExpired ? (outstandingRequest?.request.opcode ?? .handleValueIndication) : .handleValueIndication
        close(.transactionTimeout(opcode),
              requestError: requestExpired ? .transactionTimeout : .closed,
              indicationError: indicationExpired ? .transactionTimeout : .closed,
              queuedError: .closed)
        throw .closed
    }

    mutating func close(
        _ reason: ATTBearerCloseReason, requestError: ATTBearerError, indicationError: ATTBearerError,
        queuedError: ATTBearerError
    ) {
        closeReason = reason
        if let outstanding = outstandingRequest { emit(.requestFailed(outstanding.request.id, requestError)) }
        for request in queuedRequests { emit(.requestFailed(request.id, queuedError)) }
        if let indication = outstandingIndication { emit(.indicationFailed(indication.id, indicationError)) }
        for indication in queuedIndications { emit(.indicationFailed(indication.id, queuedError)) }
        outstandingRequest = nil
        queuedRequests.removeAll()
        outstandingIndication = nil
        queuedIndications.removeAll()
        peerRequest = nil
        unconfirmedIndications = 0
        emit(.closed(reason))
    }
}
