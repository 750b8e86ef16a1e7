import BluewireATT

/// Read Characteristic Value (Core Vol 3 Part G §4.8.1), also Read Characteristic Descriptor (§4.12.1):
/// one Read Request. The response carries at most ATT_MTU − 1 octets; use
/// `ReadLongCharacteristicValues` for values that may be longer.
public struct ReadCharacteristicValue: GATTClientProcedure, Sendable {
    public let handle: UInt16

    public init(handle: UInt16) {
        self.handle = handle
    }

    public mutating func start() throws(GATTClientError) -> GATTProcedureStep<[UInt8]> {
        guard handle != 0 else { throw .invalidHandleRange(start: 0, end: 0) }
        return .request(.readRequest(handle: handle))
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTClientError) -> GATTProcedureStep<[UInt8]> {
        guard case .readResponse(let value) = response else {
            throw GATTClientError.unexpected(response, to: .readRequest)
        }
        return .finished(Array(value))
    }
}
