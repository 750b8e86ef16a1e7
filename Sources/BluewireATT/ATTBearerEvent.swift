import BluewireCore

/// Identifies a request sent through an `ATTBearer`; its response or failure carries the same id.
public struct ATTRequestID: RawRepresentable, Hashable, Comparable, Sendable {
    public var rawValue: UInt64
    @inlinable public init(rawValue: UInt64) { self.rawValue = rawValue }
    @inlinable public static func < (lhs: ATTRequestID, rhs: ATTRequestID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Identifies an indication sent through an `ATTBearer`; its confirmation or failure carries the same id.
public struct ATTIndicationID: RawRepresentable, Hashable, Comparable, Sendable {
    public var rawValue: UInt64
    @inlinable public init(rawValue: UInt64) { self.rawValue = rawValue }
    @inlinable public static func < (lhs: ATTIndicationID, rhs: ATTIndicationID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Why the bearer refused an operation or failed a transaction.
public enum ATTBearerError: Error, Hashable, Sendable {
    /// A transaction timed out (30 s, Core Vol 3 Part F §3.3.3); this one was the outstanding one.
    case transactionTimeout
    /// The bearer was closed after a transaction timeout: no further PDUs may be sent on it (§3.3.3).
    case closed
    /// The connection ended.
    case disconnected
    /// The PDU is longer than ATT_MTU and may not be truncated (§3.2.8).
    case pduTooLong(length: Int, mtu: Int)
    /// `send(request:)` was given something that is not a request (e.g. a command or response).
    case notARequest(ATTOpcode)
    /// `send(command:)` was given something that is not a command.
    case notACommand(ATTOpcode)
    /// `respond` was called with no request from the peer waiting for an answer.
    case noRequestToRespondTo
    /// `respond` was given a PDU that does not answer the peer's outstanding request.
    case responseDoesNotMatchRequest(request: ATTOpcode, response: ATTOpcode)
    /// `confirmIndication` was called with no indication waiting for a confirmation.
    case noIndicationToConfirm
    /// The response to this request could not be decoded.
    case malformedResponse(DecodeError)
}

/// Why the bearer closed.
public enum ATTBearerCloseReason: Hashable, Sendable {
    /// The transaction of this opcode got no response or confirmation within 30 s (§3.3.3).
    case transactionTimeout(ATTOpcode)
    /// The connection ended.
    case disconnected
}

/// Something the bearer's owner must handle.
public enum ATTBearerEvent: Hashable, Sendable {
    /// The response (or Error Response) to a request sent with `send(request:now:)`.
    case response(ATTRequestID, ATTPDU)
    /// A request that will get no response: timed out, bearer closed, disconnected, malformed answer.
    case requestFailed(ATTRequestID, ATTBearerError)
    /// A Handle Value Notification from the peer's server.
    case notification(handle: UInt16, value: ArraySlice<UInt8>)
    /// A Multiple Handle Value Notification from the peer's server.
    case multipleNotification(MultipleHandleValueNotification)
    /// A Handle Value Indication from the peer's server. Unless the bearer confirms automatically,
    /// the owner must call `confirmIndication()`.
    case indication(handle: UInt16, value: ArraySlice<UInt8>)
    /// A request from the peer's client for the local GATT server; answer it with `respond(_:)`.
    /// Exchange MTU is answered by the bearer itself and unknown requests with Request Not Supported.
    case request(ATTPDU)
    /// A command (Write Command, Signed Write Command) from the peer's client; it gets no answer.
    case command(ATTPDU)
    /// The peer confirmed an indication sent with `indicate(handle:value:now:)`.
    case indicationConfirmed(ATTIndicationID)
    /// An indication that will never be confirmed.
    case indicationFailed(ATTIndicationID, ATTBearerError)
    /// ATT_MTU changed after an MTU exchange (either side's).
    case mtuChanged(Int)
    /// A well-formed PDU that fits no transaction (a response with no matching request, a
    /// confirmation with no indication outstanding, an unknown command): dropped.
    case unexpectedPDU(ATTOpcode)
    /// A PDU that could not be decoded: dropped (a request is answered with Invalid PDU).
    case malformedPDU(DecodeError)
    /// The bearer closed; every later operation fails.
    case closed(ATTBearerCloseReason)
}

/// One thing the bearer produced, in order: a PDU to send on the ATT channel (CID 0x0004) or an event.
public enum ATTBearerOutput: Hashable, Sendable {
    /// The PDU, opcode first, behind the bearer's `headroom` zeroed octets (none by default).
    case send([UInt8])
    case event(ATTBearerEvent)
}
