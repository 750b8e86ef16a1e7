import BluewireATT

/// Reads a set of characteristic values, each one whole, in as few round trips as the server allows.
///
/// For two or more handles it asks with Read Multiple Variable Length Characteristic Values (Core Vol 3
/// Part G §4.8.5), whose answer carries each value with its length. The server cuts that answer at
/// ATT_MTU − 1 octets (Part F §3.4.4.12), so the last value may arrive cut short and later ones not at
/// all: the cut value is finished with Read Blob Requests from where it stopped, and each missing one
/// read on its own as in Read Long Characteristic Values (§4.8.3). A server without the request
/// answers Request Not Supported (it is optional unless the server supports EATT, Part G Table 4.2),
/// and then every value is read on its own. One handle is read on its own from the start.
///
/// Any other Error Response (a value that may not be read, insufficient security) ends the procedure
/// with that error, naming the handle the server named, so that a caller can raise security and try
/// again (Part C §10.3.2).
public struct ReadMultipleValues: GATTClientProcedure, Sendable {
    public let handles: [UInt16]
    public let mtu: Int
    /// The values read so far, by position in `handles`.
    public private(set) var values: [[UInt8]?]
    /// Whether the server answered Read Multiple Variable Length with Request Not Supported.
    public private(set) var variableLengthRefused = false
    /// The value being finished on its own, and its position.
    var single: (index: Int, read: ReadLongCharacteristicValues)?

    /// `useVariableLength: false` skips Read Multiple Variable Length (for a server known not to have it).
    public init(handles: [UInt16], mtu: Int, useVariableLength: Bool = true) {
        self.handles = handles
        self.mtu = mtu
        values = Array(repeating: nil, count: handles.count)
        variableLengthRefused = !useVariableLength
    }

    public mutating func start() throws(GATTClientError) -> GATTProcedureStep<[[UInt8]]> {
        guard !handles.isEmpty, !handles.contains(0) else {
            throw .invalidHandleRange(start: handles.first ?? 0, end: handles.last ?? 0)
        }
        if handles.count >= 2, !variableLengthRefused {
            return .request(.readMultipleVariableRequest(ATTHandleList(handles)))
        }
        return try next()
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTClientError) -> GATTProcedureStep<[[UInt8]]> {
        if var current = single {
            let step = try current.read.receive(response)
            switch step {
            case .request(let pdu):
                single = current
                return .request(pdu)
            case .finished(let value):
                values[current.index] = value
                single = nil
                return try next()
            }
        }
        switch response {
        case .readMultipleVariableResponse(let list):
            var index = 0
            for entry in list.entries where index < handles.count {
                if entry.isTruncated {
                    // Finished from where the server stopped (Read Blob at that offset, §4.8.3).
                    var read = ReadLongCharacteristicValues(handle: handles[index], mtu: mtu)
                    read.resume(after: Array(entry.value))
                    single = (index, read)
                    return .request(.readBlobRequest(handle: handles[index], offset: UInt16(entry.value.count)))
                }
                values[index] = Array(entry.value)
                index += 1
            }
            return try next()
        case .errorResponse(.readMultipleVariableRequest, _, .requestNotSupported):
            variableLengthRefused = true
            return try next()
        default:
            throw GATTClientError.unexpected(response, to: .readMultipleVariableRequest)
        }
    }

    /// Starts reading the first value still missing on its own, or finishes.
    mutating func next() throws(GATTClientError) -> GATTProcedureStep<[[UInt8]]> {
        guard let index = values.firstIndex(where: { $0 == nil }) else {
            return .finished(values.map { $0 ?? [] })
        }
        var read = ReadLongCharacteristicValues(handle: handles[index], mtu: mtu)
        guard case .request(let pdu) = try read.start() else { return .finished(values.map { $0 ?? [] }) }
        single = (index, read)
        return .request(pdu)
    }
}
