import BluewireCore

/// One command on the LE signaling channel (CID 0x0005, Core Vol 3 Part A §4): Code, Identifier,
/// Length, then the command's data. On LE a C-frame carries exactly one command.
///
/// Values and lists are slices of the received bytes.
public struct LESignalingCommand: Hashable, Sendable {
    /// Matches a response to its request; 0x00 is never valid (§4).
    public var identifier: UInt8
    public var body: Body

    @inlinable
    public init(identifier: UInt8, body: Body) {
        self.identifier = identifier
        self.body = body
    }

    /// The command's code.
    @inlinable public var code: LESignalingCode { body.code }

    /// The command-specific data, by code.
    public enum Body: Hashable, Sendable {
        /// §4.1: the request with this identifier was rejected.
        case commandReject(reason: LESignalingRejectReason, data: ArraySlice<UInt8>)
        /// §4.6
        case disconnectionRequest(destinationCID: UInt16, sourceCID: UInt16)
        /// §4.7
        case disconnectionResponse(destinationCID: UInt16, sourceCID: UInt16)
        /// §4.20: sent by a peripheral only.
        case connectionParameterUpdateRequest(ConnectionParameterUpdate)
        /// §4.21
        case connectionParameterUpdateResponse(result: ConnectionParameterUpdateResult)
        /// §4.22
        case leCreditBasedConnectionRequest(spsm: UInt16, sourceCID: UInt16, mtu: UInt16, mps: UInt16, initialCredits: UInt16)
        /// §4.23: on a refusal the other fields are 0x0000.
        case leCreditBasedConnectionResponse(destinationCID: UInt16, mtu: UInt16, mps: UInt16, initialCredits: UInt16, result: LECreditBasedConnectionResult)
        /// §4.24
        case flowControlCreditIndication(cid: UInt16, credits: UInt16)
        /// §4.25: up to five source CIDs.
        case creditBasedConnectionRequest(spsm: UInt16, mtu: UInt16, mps: UInt16, initialCredits: UInt16, sourceCIDs: L2CAPCIDList)
        /// §4.26: one Destination CID per requested channel, 0x0000 for each one refused.
        case creditBasedConnectionResponse(mtu: UInt16, mps: UInt16, initialCredits: UInt16, result: CreditBasedConnectionResult, destinationCIDs: L2CAPCIDList)
        /// §4.27
        case creditBasedReconfigureRequest(mtu: UInt16, mps: UInt16, destinationCIDs: L2CAPCIDList)
        /// §4.28
        case creditBasedReconfigureResponse(result: CreditBasedReconfigureResult)
        /// A BR/EDR-only or unknown command, kept raw. On LE it is answered with Command Reject.
        case other(code: LESignalingCode, data: ArraySlice<UInt8>)

        @inlinable
        public var code: LESignalingCode {
            switch self {
            case .commandReject: return .commandReject
            case .disconnectionRequest: return .disconnectionRequest
            case .disconnectionResponse: return .disconnectionResponse
            case .connectionParameterUpdateRequest: return .connectionParameterUpdateRequest
            case .connectionParameterUpdateResponse: return .connectionParameterUpdateResponse
            case .leCreditBasedConnectionRequest: return .leCreditBasedConnectionRequest
            case .leCreditBasedConnectionResponse: return .leCreditBasedConnectionResponse
            case .flowControlCreditIndication: return .flowControlCreditIndication
            case .creditBasedConnectionRequest: return .creditBasedConnectionRequest
            case .creditBasedConnectionResponse: return .creditBasedConnectionResponse
            case .creditBasedReconfigureRequest: return .creditBasedReconfigureRequest
            case .creditBasedReconfigureResponse: return .creditBasedReconfigureResponse
            case .other(let code, _): return code
            }
        }
    }
}

/// The Result of a Connection Parameter Update Response (Core Vol 3 Part A §4.21).
public struct ConnectionParameterUpdateResult: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }
    /// 0x0000: connection parameters accepted.
    public static let accepted = ConnectionParameterUpdateResult(rawValue: 0x0000)
    /// 0x0001: connection parameters rejected.
    public static let rejected = ConnectionParameterUpdateResult(rawValue: 0x0001)
}

/// A list of 16-bit channel identifiers (the CID lists of the enhanced credit based commands).
public struct L2CAPCIDList: Hashable, Sendable, Sequence {
    /// The raw little-endian CIDs.
    public private(set) var bytes: ArraySlice<UInt8>

    /// Wraps a received list; it must hold whole CIDs. `offset` locates it in the command.
    public init(validating bytes: ArraySlice<UInt8>, field: StaticString, offset: Int) throws(DecodeError) {
        guard bytes.count % 2 == 0 else {
            throw DecodeError(.lengthMismatch(declared: 2, actual: bytes.count), layer: "l2cap", field: field, offset: offset)
        }
        self.bytes = bytes
    }

    /// A list built from CIDs.
    public init<S: Sequence>(_ cids: S) where S.Element == UInt16 {
        var out: [UInt8] = []
        for cid in cids {
            out.append(UInt8(truncatingIfNeeded: cid))
            out.append(UInt8(truncatingIfNeeded: cid >> 8))
        }
        bytes = out[...]
    }

    public var count: Int { bytes.count / 2 }

    public func makeIterator() -> Iterator { Iterator(list: bytes) }

    /// A non-allocating iterator over the CIDs.
    public struct Iterator: IteratorProtocol, Sendable {
        let list: ArraySlice<UInt8>
        var index: Int
        init(list: ArraySlice<UInt8>) {
            self.list = list
            self.index = list.startIndex
        }
        public mutating func next() -> UInt16? {
            guard list.endIndex - index >= 2 else { return nil }
            defer { index += 2 }
            return UInt16(list[index]) | UInt16(list[index + 1]) << 8
        }
    }
}
