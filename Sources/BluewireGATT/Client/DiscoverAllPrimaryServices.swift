import BluewireATT
import BluewireCore

/// Discover All Primary Services (Core Vol 3 Part G §4.4.1).
///
/// Sends Read By Group Type Requests for «Primary Service» (0x2800) starting at `startingHandle`, each
/// next request starting after the last End Group Handle received, until the server answers Attribute
/// Not Found or a group ends at the ending handle (0xFFFF for a full discovery).
public struct DiscoverAllPrimaryServices: GATTClientProcedure, Sendable {
    public let startingHandle: UInt16
    public let endingHandle: UInt16
    /// The services found so far, in handle order.
    public private(set) var services: [GATTService] = []
    @usableFromInline var nextStart: UInt16

    public init(startingHandle: UInt16 = 0x0001, endingHandle: UInt16 = 0xFFFF) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.nextStart = startingHandle
    }

    public mutating func start() throws(GATTClientError) -> GATTProcedureStep<[GATTService]> {
        try validateRange(startingHandle, endingHandle)
        return request()
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTClientError) -> GATTProcedureStep<[GATTService]> {
        switch response {
        case .readByGroupTypeResponse(let list):
            // Groups must lie in the requested range and follow each other; anything else would make
            // the next request repeat or go backwards.
            var floor = Int(nextStart)
            for entry in list.entries {
                guard Int(entry.handle) >= floor, entry.endGroupHandle >= entry.handle, entry.handle <= endingHandle
                else { throw .handlesNotIncreasing(request: .readByGroupTypeRequest, handle: entry.handle) }
                let offset = pduOffset(of: entry.value, in: list.attributeDataList, listOffset: 2)
                let uuid = try attUUID(entry.value, field: "Attribute Value (service UUID)", offset: offset)
                services.append(GATTService(handle: entry.handle, endHandle: entry.endGroupHandle, uuid: uuid))
                floor = Int(entry.endGroupHandle) + 1
            }
            guard floor > Int(nextStart) else { throw .handlesNotIncreasing(request: .readByGroupTypeRequest, handle: nextStart) }
            if floor > Int(endingHandle) { return .finished(services) }
            nextStart = UInt16(floor)
            return request()
        case .errorResponse(.readByGroupTypeRequest, _, .attributeNotFound):
            return .finished(services)
        default:
            throw GATTClientError.unexpected(response, to: .readByGroupTypeRequest)
        }
    }

    @usableFromInline
    func request() -> GATTProcedureStep<[GATTService]> {
        .request(.readByGroupTypeRequest(
            startingHandle: nextStart, endingHandle: endingHandle, attributeGroupType: .primaryService))
    }
}
