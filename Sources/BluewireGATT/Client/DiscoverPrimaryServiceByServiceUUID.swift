import BluewireATT
import BluewireCore

/// Discover Primary Service by Service UUID (Core Vol 3 Part G §4.4.2).
///
/// Sends Find By Type Value Requests for «Primary Service» (0x2800) whose value is the service UUID
/// (2 or 16 octets), continuing after the last Group End Handle until Attribute Not Found or the
/// ending handle. A server may hold several instances of one service.
public struct DiscoverPrimaryServiceByServiceUUID: GATTClientProcedure, Sendable {
    public let uuid: BluetoothUUID
    public let startingHandle: UInt16
    public let endingHandle: UInt16
    /// The instances found so far, in handle order.
    public private(set) var services: [GATTService] = []
    @usableFromInline let uuidBytes: [UInt8]
    @usableFromInline var nextStart: UInt16

    public init(uuid: BluetoothUUID, startingHandle: UInt16 = 0x0001, endingHandle: UInt16 = 0xFFFF) {
        self.uuid = uuid
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.uuidBytes = uuid.attBytes
        self.nextStart = startingHandle
    }

    public mutating func start() throws(GATTClientError) -> GATTProcedureStep<[GATTService]> {
        try validateRange(startingHandle, endingHandle)
        return request()
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTClientError) -> GATTProcedureStep<[GATTService]> {
        switch response {
        case .findByTypeValueResponse(let list):
            var floor = Int(nextStart)
            for entry in list.entries {
                guard Int(entry.foundAttributeHandle) >= floor, entry.groupEndHandle >= entry.foundAttributeHandle,
                    entry.foundAttributeHandle <= endingHandle
                else { throw .handlesNotIncreasing(request: .findByTypeValueRequest, handle: entry.foundAttributeHandle) }
                services.append(GATTService(handle: entry.foundAttributeHandle, endHandle: entry.groupEndHandle, uuid: uuid))
                floor = Int(entry.groupEndHandle) + 1
            }
            guard floor > Int(nextStart) else { throw .handlesNotIncreasing(request: .findByTypeValueRequest, handle: nextStart) }
            if floor > Int(endingHandle) { return .finished(services) }
            nextStart = UInt16(floor)
            return request()
        case .errorResponse(.findByTypeValueRequest, _, .attributeNotFound):
            return .finished(services)
        default:
            throw GATTClientError.unexpected(response, to: .findByTypeValueRequest)
        }
    }

    @usableFromInline
    func request() -> GATTProcedureStep<[GATTService]> {
        .request(.findByTypeValueRequest(
            startingHandle: nextStart, endingHandle: endingHandle, attributeType: 0x2800,
            attributeValue: uuidBytes[...]))
    }
}
