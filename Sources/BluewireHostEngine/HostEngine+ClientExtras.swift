import BluewireATT
import BluewireCore
import BluewireGATT

// Left out of builds with BLUEWIRE_NO_CENTRAL (no GATT client at all) or BLUEWIRE_NO_GATT_CLIENT_EXTRAS
// (the firmware images: their applications discover the whole database with `.discoverAll`, so these
// procedures would only add flash).
#if !BLUEWIRE_NO_CENTRAL && !BLUEWIRE_NO_GATT_CLIENT_EXTRAS

/// The GATT client's procedures beyond `.discoverAll`, the reads and the writes by handle: discovery
/// step by step, Read Using Characteristic UUID and the strict Read Multiple variants (Core Vol 3 Part G
/// §4.4.1–§4.8.5). Each runs inside the engine as one request, as the others do, on the ATT bearer's
/// queue or an EATT bearer's. The long write at an offset and reliable writes are `PreparedWrites`, run
/// as `ClientProcedure.writeLong`.
enum ClientExtraProcedure: Sendable {
    case primaryServices(DiscoverAllPrimaryServices)
    case primaryServicesByUUID(DiscoverPrimaryServiceByServiceUUID)
    case includes(FindIncludedServices)
    case characteristics(DiscoverCharacteristics)
    case descriptors(DiscoverAllCharacteristicDescriptors)
    case readByType(ReadUsingCharacteristicUUID)
    case readMultipleVariable(ReadMultipleVariableLengthCharacteristicValues)
    case readMultipleConcatenated(ReadMultipleCharacteristicValues)

    /// The peer's state machine trigger (HostEngine+ClientPhases): primary service discovery is
    /// DiscoverServices, discovery inside a service DiscoverCharacteristics (as for the application's
    /// own phases, HostEngine+AppPhases), the reads Read.
    var trigger: ConnectionTrigger {
        switch self {
        case .primaryServices, .primaryServicesByUUID: .discoverServices
        case .includes, .characteristics, .descriptors: .discoverCharacteristics
        case .readByType, .readMultipleVariable, .readMultipleConcatenated: .read
        }
    }

    /// `start()` when `response` is nil, else `receive(response)`: one switch for both keeps the
    /// procedures' code in one place.
    mutating func step(_ response: ATTPDU?) throws(GATTClientError) -> ClientProcedure.Step {
        switch self {
        case .primaryServices(var p):
            defer { self = .primaryServices(p) }
            return try Self.advance(&p, response) { .primaryServices($0) }
        case .primaryServicesByUUID(var p):
            defer { self = .primaryServicesByUUID(p) }
            return try Self.advance(&p, response) { .primaryServices($0) }
        case .includes(var p):
            defer { self = .includes(p) }
            return try Self.advance(&p, response) { .includedServices($0) }
        case .characteristics(var p):
            defer { self = .characteristics(p) }
            return try Self.advance(&p, response) { .characteristics($0) }
        case .descriptors(var p):
            defer { self = .descriptors(p) }
            return try Self.advance(&p, response) { .descriptors($0) }
        case .readByType(var p):
            defer { self = .readByType(p) }
            return try Self.advance(&p, response) { .handleValues($0) }
        case .readMultipleVariable(var p):
            defer { self = .readMultipleVariable(p) }
            return try Self.advance(&p, response) { .values($0) }
        case .readMultipleConcatenated(var p):
            defer { self = .readMultipleConcatenated(p) }
            return try Self.advance(&p, response) { .value($0) }
        }
    }

    static func advance<Procedure: GATTClientProcedure>(
        _ procedure: inout Procedure, _ response: ATTPDU?, _ done: (Procedure.Output) -> HostCompletion
    ) throws(GATTClientError) -> ClientProcedure.Step {
        let step = if let response { try procedure.receive(response) } else { try procedure.start() }
        return ClientProcedure.map(step, done)
    }
}

extension ClientProcedure {
    /// The procedure that runs `request` at ATT_MTU `mtu`, for the requests this file adds; nil for
    /// the others (HostEngine+GATTClient builds those).
    init?(extra request: GATTClientRequest, mtu: Int) {
        switch request {
        case .discoverPrimaryServices(let uuid?): self = .extra(.primaryServicesByUUID(DiscoverPrimaryServiceByServiceUUID(uuid: uuid)))
        case .discoverPrimaryServices(nil): self = .extra(.primaryServices(DiscoverAllPrimaryServices()))
        case .findIncludedServices(let service): self = .extra(.includes(FindIncludedServices(of: service)))
        case .discoverCharacteristics(let service, let uuid): self = .extra(.characteristics(DiscoverCharacteristics(of: service, uuid: uuid)))
        case .discoverDescriptors(let characteristic): self = .extra(.descriptors(DiscoverAllCharacteristicDescriptors(of: characteristic)))
        case .readUsingCharacteristicUUID(let uuid, let start, let end):
            self = .extra(.readByType(ReadUsingCharacteristicUUID(uuid: uuid, startingHandle: start, endingHandle: end)))
        case .readMultipleVariableLength(let handles):
            self = .extra(.readMultipleVariable(ReadMultipleVariableLengthCharacteristicValues(handles: handles)))
        case .readMultipleConcatenated(let handles): self = .extra(.readMultipleConcatenated(ReadMultipleCharacteristicValues(handles: handles)))
        case .writeLongAtOffset(let handle, let value, let offset):
            self = .writeLong(.writeLong(handle: handle, value: value, offset: offset, mtu: mtu))
        case .reliableWrite(let writes):
            self = .writeLong(.reliable(writes.map { ($0.handle, $0.value) }, mtu: mtu))
        default: return nil
        }
    }
}

#endif  // !BLUEWIRE_NO_CENTRAL && !BLUEWIRE_NO_GATT_CLIENT_EXTRAS
