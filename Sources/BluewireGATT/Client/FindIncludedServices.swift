import BluewireATT
import BluewireCore

/// Find Included Services (Core Vol 3 Part G §4.5.1).
///
/// Sends Read By Type Requests for «Include» (0x2802) over the service's handles. An include
/// declaration's value is the included service's handle, its End Group Handle and, only when the
/// included service has a 16-bit UUID, that UUID (§3.2). For a 128-bit UUID the value is 4 octets and
/// the client reads the included service's declaration with a Read Request to learn it.
public struct FindIncludedServices: GATTClientProcedure, Sendable {
    public let startingHandle: UInt16
    public let endingHandle: UInt16
    /// The includes found so far, in handle order.
    public private(set) var includes: [GATTIncludedService] = []
    @usableFromInline var nextStart: UInt16
    /// Indices into `includes` whose 128-bit UUID still has to be read.
    @usableFromInline var unresolved: [Int] = []
    @usableFromInline var searchFinished = false

    /// Searches the definition of `service`.
    public init(of service: GATTService) {
        self.init(startingHandle: service.handle, endingHandle: service.endHandle)
    }

    public init(startingHandle: UInt16, endingHandle: UInt16) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.nextStart = startingHandle
    }

    public mutating func start() throws(GATTClientError) -> GATTProcedureStep<[GATTIncludedService]> {
        try validateRange(startingHandle, endingHandle)
        return searchRequest()
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTClientError) -> GATTProcedureStep<[GATTIncludedService]> {
        if let waiting = unresolved.first {
            // Answer to the Read Request for a 128-bit included service's declaration.
            guard case .readResponse(let value) = response else {
                throw GATTClientError.unexpected(response, to: .readRequest)
            }
            includes[waiting].uuid = try attUUID(value, field: "Attribute Value (included service UUID)", offset: 1)
            unresolved.removeFirst()
            return nextStep()
        }
        switch response {
        case .readByTypeResponse(let list):
            var last = Int(nextStart) - 1
            for entry in list.entries {
                guard Int(entry.handle) > last, entry.handle <= endingHandle else {
                    throw .handlesNotIncreasing(request: .readByTypeRequest, handle: entry.handle)
                }
                let value = entry.value
                let offset = pduOffset(of: value, in: list.attributeDataList, listOffset: 2)
                guard value.count == 4 || value.count == 6 else {
                    throw .malformedResponse(DecodeError(
                        .invalidValue(UInt64(value.count)), layer: "gatt", field: "Include Declaration", offset: offset))
                }
                let s = value.startIndex
                // A placeholder UUID until the Read Request answers (4-octet values carry none).
                let uuid = value.count == 6
                    ? try attUUID(value[(s + 4)...], field: "Service UUID", offset: offset + 4) : BluetoothUUID(high: 0, low: 0)
                includes.append(GATTIncludedService(
                    declarationHandle: entry.handle, serviceHandle: uint16(value, at: s),
                    endHandle: uint16(value, at: s + 2), uuid: uuid))
                if value.count == 4 { unresolved.append(includes.count - 1) }
                last = Int(entry.handle)
            }
            guard last >= Int(nextStart) else { throw .handlesNotIncreasing(request: .readByTypeRequest, handle: nextStart) }
            if last >= Int(endingHandle) { searchFinished = true } else { nextStart = UInt16(last + 1) }
            return nextStep()
        case .errorResponse(.readByTypeRequest, _, .attributeNotFound):
            searchFinished = true
            return nextStep()
        default:
            throw GATTClientError.unexpected(response, to: .readByTypeRequest)
        }
    }

    /// Resolve pending 128-bit UUIDs first, then continue the search.
    @usableFromInline
    func nextStep() -> GATTProcedureStep<[GATTIncludedService]> {
        if let waiting = unresolved.first {
            return .request(.readRequest(handle: includes[waiting].serviceHandle))
        }
        return searchFinished ? .finished(includes) : searchRequest()
    }

    @usableFromInline
    func searchRequest() -> GATTProcedureStep<[GATTIncludedService]> {
        .request(.readByTypeRequest(startingHandle: nextStart, endingHandle: endingHandle, attributeType: .include))
    }
}
