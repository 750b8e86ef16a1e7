import BluewireATT
import BluewireCore

/// An attribute handle and the value read from it.
public struct GATTHandleValue: Hashable, Sendable {
    public var handle: UInt16
    public var value: [UInt8]

    @inlinable
    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }
}

/// Read Using Characteristic UUID (Core Vol 3 Part G §4.8.2): Read By Type Requests for the
/// characteristic UUID over a handle range, returning every matching value handle and its value.
///
/// One response holds only values of equal length (Vol 3 Part F §3.4.4.2), so the procedure continues
/// after the last handle received until Attribute Not Found or the end of the range. Each value is at
/// most min(ATT_MTU − 4, 253) octets; read longer ones with `ReadLongCharacteristicValues`.
public struct ReadUsingCharacteristicUUID: GATTClientProcedure, Sendable {
    public let uuid: BluetoothUUID
    public let startingHandle: UInt16
    public let endingHandle: UInt16
    /// The values read so far, in handle order.
    public private(set) var values: [GATTHandleValue] = []
    @usableFromInline var nextStart: UInt16

    public init(uuid: BluetoothUUID, startingHandle: UInt16 = 0x0001, endingHandle: UInt16 = 0xFFFF) {
        self.uuid = uuid
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.nextStart = startingHandle
    }

    public mutating func start() throws(GATTClientError) -> GATTProcedureStep<[GATTHandleValue]> {
        try validateRange(startingHandle, endingHandle)
        return request()
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTClientError) -> GATTProcedureStep<[GATTHandleValue]> {
        switch response {
        case .readByTypeResponse(let list):
            var last = Int(nextStart) - 1
            for entry in list.entries {
                guard Int(entry.handle) > last, entry.handle <= endingHandle else {
                    throw .handlesNotIncreasing(request: .readByTypeRequest, handle: entry.handle)
                }
                values.append(GATTHandleValue(handle: entry.handle, value: Array(entry.value)))
                last = Int(entry.handle)
            }
            guard last >= Int(nextStart) else { throw .handlesNotIncreasing(request: .readByTypeRequest, handle: nextStart) }
            if last >= Int(endingHandle) { return .finished(values) }
            nextStart = UInt16(last + 1)
            return request()
        case .errorResponse(.readByTypeRequest, _, .attributeNotFound):
            return .finished(values)
        default:
            throw GATTClientError.unexpected(response, to: .readByTypeRequest)
        }
    }

    @usableFromInline
    func request() -> GATTProcedureStep<[GATTHandleValue]> {
        .request(.readByTypeRequest(startingHandle: nextStart, endingHandle: endingHandle, attributeType: uuid))
    }
}
