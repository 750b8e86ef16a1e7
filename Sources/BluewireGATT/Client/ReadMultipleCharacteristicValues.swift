import BluewireATT

/// Read Multiple Characteristic Values (Core Vol 3 Part G §4.8.4): one Read Multiple Request for two or
/// more handles. The response concatenates the values with no lengths, so only a client that knows
/// each value's size can split it; the set is cut at ATT_MTU − 1 octets.
public struct ReadMultipleCharacteristicValues: GATTClientProcedure, Sendable {
    public let handles: [UInt16]

    public init(handles: [UInt16]) {
        self.handles = handles
    }

    public mutating func start() throws(GATTClientError) -> GATTProcedureStep<[UInt8]> {
        // Read Multiple needs "two or more" handles (Vol 3 Part F §3.4.4.7), none of them 0x0000.
        guard handles.count >= 2, !handles.contains(0) else {
            throw .invalidHandleRange(start: handles.first ?? 0, end: handles.last ?? 0)
        }
        return .request(.readMultipleRequest(ATTHandleList(handles)))
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTClientError) -> GATTProcedureStep<[UInt8]> {
        guard case .readMultipleResponse(let values) = response else {
            throw GATTClientError.unexpected(response, to: .readMultipleRequest)
        }
        return .finished(Array(values))
    }
}

/// Read Multiple Variable Length Characteristic Values (Core Vol 3 Part G §4.8.5): like Read Multiple,
/// but each value comes with its length, so values of any size can be told apart. A value cut short by
/// ATT_MTU is returned as received (shorter than the server's declared length).
public struct ReadMultipleVariableLengthCharacteristicValues: GATTClientProcedure, Sendable {
    public let handles: [UInt16]

    public init(handles: [UInt16]) {
        self.handles = handles
    }

    public mutating func start() throws(GATTClientError) -> GATTProcedureStep<[[UInt8]]> {
        guard handles.count >= 2, !handles.contains(0) else {
            throw .invalidHandleRange(start: handles.first ?? 0, end: handles.last ?? 0)
        }
        return .request(.readMultipleVariableRequest(ATTHandleList(handles)))
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTClientError) -> GATTProcedureStep<[[UInt8]]> {
        guard case .readMultipleVariableResponse(let list) = response else {
            throw GATTClientError.unexpected(response, to: .readMultipleVariableRequest)
        }
        return .finished(list.entries.map { Array($0.value) })
    }
}
