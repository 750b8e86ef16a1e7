import BluewireATT
import BluewireCore

/// Discover All Characteristic Descriptors (Core Vol 3 Part G §4.7.1).
///
/// Sends Find Information Requests over the handles after the characteristic value up to the end of
/// the characteristic definition, continuing after the last handle received, until Attribute Not Found
/// or the end. Every attribute in that range is a descriptor of the characteristic.
public struct DiscoverAllCharacteristicDescriptors: GATTClientProcedure, Sendable {
    public let startingHandle: UInt16
    public let endingHandle: UInt16
    /// The descriptors found so far, in handle order.
    public private(set) var descriptors: [GATTDescriptor] = []
    @usableFromInline var nextStart: UInt16

    /// The descriptors of `characteristic`: `valueHandle + 1 ... endHandle` (none if that is empty).
    public init(of characteristic: GATTCharacteristic) {
        self.startingHandle = characteristic.valueHandle &+ 1
        self.endingHandle = characteristic.mayHaveDescriptors ? characteristic.endHandle : 0
        self.nextStart = startingHandle
    }

    public init(startingHandle: UInt16, endingHandle: UInt16) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.nextStart = startingHandle
    }

    public mutating func start() throws(GATTClientError) -> GATTProcedureStep<[GATTDescriptor]> {
        // A characteristic whose value is its last attribute has no descriptors: nothing to ask.
        if endingHandle == 0 { return .finished([]) }
        try validateRange(startingHandle, endingHandle)
        return request()
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTClientError) -> GATTProcedureStep<[GATTDescriptor]> {
        switch response {
        case .findInformationResponse(let list):
            var last = Int(nextStart) - 1
            for entry in list.entries {
                guard Int(entry.handle) > last, entry.handle <= endingHandle else {
                    throw .handlesNotIncreasing(request: .findInformationRequest, handle: entry.handle)
                }
                descriptors.append(GATTDescriptor(handle: entry.handle, uuid: entry.type))
                last = Int(entry.handle)
            }
            guard last >= Int(nextStart) else {
                throw .handlesNotIncreasing(request: .findInformationRequest, handle: nextStart)
            }
            if last >= Int(endingHandle) { return .finished(descriptors) }
            nextStart = UInt16(last + 1)
            return request()
        case .errorResponse(.findInformationRequest, _, .attributeNotFound):
            return .finished(descriptors)
        default:
            throw GATTClientError.unexpected(response, to: .findInformationRequest)
        }
    }

    @usableFromInline
    func request() -> GATTProcedureStep<[GATTDescriptor]> {
        .request(.findInformationRequest(startingHandle: nextStart, endingHandle: endingHandle))
    }
}
