import BluewireATT
import BluewireCore

/// Discover All Characteristics of a Service (Core Vol 3 Part G §4.6.1) and Discover Characteristics
/// by UUID (§4.6.2).
///
/// Both send Read By Type Requests for «Characteristic» (0x2803) over the service's handles, each next
/// request starting after the last declaration received, until Attribute Not Found or the service's end.
/// A declaration's value is Properties (1), Value Handle (2) and UUID (2 or 16), §3.3.1. By UUID keeps
/// only matching characteristics; the spec's procedure reads every declaration anyway, and so the end
/// handle of each match (the handle before the next declaration, §4.7.1) is known either way.
public struct DiscoverCharacteristics: GATTClientProcedure, Sendable {
    public let startingHandle: UInt16
    public let endingHandle: UInt16
    /// Only characteristics of this type are returned (nil: all).
    public let uuid: BluetoothUUID?
    /// Every declaration found so far (before filtering), in handle order; end handles are final once
    /// the procedure finishes.
    public private(set) var declarations: [GATTCharacteristic] = []
    @usableFromInline var nextStart: UInt16

    /// The characteristics of `service` (all of them, or those of type `uuid`).
    public init(of service: GATTService, uuid: BluetoothUUID? = nil) {
        self.init(startingHandle: service.handle, endingHandle: service.endHandle, uuid: uuid)
    }

    public init(startingHandle: UInt16, endingHandle: UInt16, uuid: BluetoothUUID? = nil) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.uuid = uuid
        self.nextStart = startingHandle
    }

    public mutating func start() throws(GATTClientError) -> GATTProcedureStep<[GATTCharacteristic]> {
        try validateRange(startingHandle, endingHandle)
        return request()
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTClientError) -> GATTProcedureStep<[GATTCharacteristic]> {
        switch response {
        case .readByTypeResponse(let list):
            var last = Int(nextStart) - 1
            for entry in list.entries {
                guard Int(entry.handle) > last, entry.handle <= endingHandle else {
                    throw .handlesNotIncreasing(request: .readByTypeRequest, handle: entry.handle)
                }
                let offset = pduOffset(of: entry.value, in: list.attributeDataList, listOffset: 2)
                declarations.append(try Self.declaration(entry.handle, entry.value, offset: offset, end: endingHandle))
                last = Int(entry.handle)
            }
            guard last >= Int(nextStart) else { throw .handlesNotIncreasing(request: .readByTypeRequest, handle: nextStart) }
            if last >= Int(endingHandle) { return finish() }
            nextStart = UInt16(last + 1)
            return request()
        case .errorResponse(.readByTypeRequest, _, .attributeNotFound):
            return finish()
        default:
            throw GATTClientError.unexpected(response, to: .readByTypeRequest)
        }
    }

    /// Decodes a characteristic declaration value (§3.3.1); its end handle is provisional.
    @usableFromInline
    static func declaration(
        _ handle: UInt16, _ value: ArraySlice<UInt8>, offset: Int, end: UInt16
    ) throws(GATTClientError) -> GATTCharacteristic {
        guard value.count == 5 || value.count == 19 else {
            throw .malformedResponse(DecodeError(
                .invalidValue(UInt64(value.count)), layer: "gatt", field: "Characteristic Declaration", offset: offset))
        }
        let s = value.startIndex
        let valueHandle = uint16(value, at: s + 1)
        // The value attribute follows its declaration (§3.3.2) and lies inside the searched range.
        guard valueHandle > handle, valueHandle <= end else {
            throw .malformedResponse(DecodeError(
                .invalidValue(UInt64(valueHandle)), layer: "gatt", field: "Characteristic Value Handle", offset: offset + 1))
        }
        let uuid = try attUUID(value[(s + 3)...], field: "Characteristic UUID", offset: offset + 3)
        return GATTCharacteristic(
            handle: handle, valueHandle: valueHandle, properties: CharacteristicProperties(rawValue: value[s]),
            uuid: uuid, endHandle: end)
    }

    /// Each definition ends just before the next declaration; the last one at the range's end (§4.7.1).
    @usableFromInline
    mutating func finish() -> GATTProcedureStep<[GATTCharacteristic]> {
        for i in declarations.indices {
            declarations[i].endHandle = i + 1 < declarations.count ? declarations[i + 1].handle - 1 : endingHandle
        }
        guard let uuid else { return .finished(declarations) }
        return .finished(declarations.filter { $0.uuid == uuid })
    }

    @usableFromInline
    func request() -> GATTProcedureStep<[GATTCharacteristic]> {
        .request(.readByTypeRequest(startingHandle: nextStart, endingHandle: endingHandle, attributeType: .characteristic))
    }
}
