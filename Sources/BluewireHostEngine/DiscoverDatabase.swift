import BluewireATT
import BluewireCore
import BluewireGATT

// Left out of builds with BLUEWIRE_NO_CENTRAL (the peripheral firmware image); HostEngine+NoCentral stands in.
#if !BLUEWIRE_NO_CENTRAL

/// Discover All: primary services (Core Vol 3 Part G §4.4.1), then for each service its included
/// services (§4.5.1) and characteristics (§4.6.1), then each characteristic's descriptors (§4.7.1),
/// one request at a time. Built from the BluewireGATT procedures, fed in order.
struct DiscoverDatabase: GATTClientProcedure, Sendable {
    typealias Step = GATTProcedureStep<[DiscoveredService]>

    enum Stage: Sendable {
        case services(DiscoverAllPrimaryServices)
        case includes(service: Int, FindIncludedServices)
        case characteristics(service: Int, DiscoverCharacteristics)
        case descriptors(service: Int, characteristic: Int, DiscoverAllCharacteristicDescriptors)
    }

    var stage: Stage = .services(DiscoverAllPrimaryServices())
    var found: [DiscoveredService] = []

    /// True until the primary services are known (the state machine's DiscoveringServices phase).
    var isDiscoveringServices: Bool {
        if case .services = stage { return true }
        return false
    }

    mutating func start() throws(GATTClientError) -> Step {
        guard case .services(var procedure) = stage else { return .finished(found) }
        let step = try procedure.start()
        stage = .services(procedure)
        return try servicesStep(step)
    }

    mutating func receive(_ response: ATTPDU) throws(GATTClientError) -> Step {
        switch stage {
        case .services(var procedure):
            let step = try procedure.receive(response)
            stage = .services(procedure)
            return try servicesStep(step)
        case .includes(let service, var procedure):
            let step = try procedure.receive(response)
            stage = .includes(service: service, procedure)
            return try includesStep(step, service: service)
        case .characteristics(let service, var procedure):
            let step = try procedure.receive(response)
            stage = .characteristics(service: service, procedure)
            return try characteristicsStep(step, service: service)
        case .descriptors(let service, let characteristic, var procedure):
            let step = try procedure.receive(response)
            stage = .descriptors(service: service, characteristic: characteristic, procedure)
            return try descriptorsStep(step, service: service, characteristic: characteristic)
        }
    }

    mutating func servicesStep(_ step: GATTProcedureStep<[GATTService]>) throws(GATTClientError) -> Step {
        switch step {
        case .request(let pdu): return .request(pdu)
        case .finished(let services):
            found = services.map { DiscoveredService(service: $0, characteristics: []) }
            return try nextService(from: 0)
        }
    }

    mutating func includesStep(_ step: GATTProcedureStep<[GATTIncludedService]>, service: Int) throws(GATTClientError) -> Step {
        switch step {
        case .request(let pdu): return .request(pdu)
        case .finished(let list):
            found[service].includes = list
            return try characteristics(of: service)
        }
    }

    mutating func characteristicsStep(_ step: GATTProcedureStep<[GATTCharacteristic]>, service: Int) throws(GATTClientError) -> Step {
        switch step {
        case .request(let pdu): return .request(pdu)
        case .finished(let list):
            found[service].characteristics = list.map { DiscoveredCharacteristic(characteristic: $0, descriptors: []) }
            return try descriptors(service: service, from: 0)
        }
    }

    mutating func descriptorsStep(
        _ step: GATTProcedureStep<[GATTDescriptor]>, service: Int, characteristic: Int
    ) throws(GATTClientError) -> Step {
        switch step {
        case .request(let pdu): return .request(pdu)
        case .finished(let list):
            found[service].characteristics[characteristic].descriptors = list
            return try descriptors(service: service, from: characteristic + 1)
        }
    }

    /// Starts on the service at `service` (its includes, then its characteristics), or finishes
    /// after the last one.
    mutating func nextService(from service: Int) throws(GATTClientError) -> Step {
        guard service < found.count else { return .finished(found) }
        var procedure = FindIncludedServices(of: found[service].service)
        let step = try procedure.start()
        stage = .includes(service: service, procedure)
        return try includesStep(step, service: service)
    }

    /// Starts characteristic discovery in the service at `service`.
    mutating func characteristics(of service: Int) throws(GATTClientError) -> Step {
        var procedure = DiscoverCharacteristics(of: found[service].service)
        let step = try procedure.start()
        stage = .characteristics(service: service, procedure)
        return try characteristicsStep(step, service: service)
    }

    /// Starts descriptor discovery for the first characteristic at or after `from` that has room
    /// for descriptors, else moves on to the next service.
    mutating func descriptors(service: Int, from first: Int) throws(GATTClientError) -> Step {
        var index = first
        while index < found[service].characteristics.count {
            let characteristic = found[service].characteristics[index].characteristic
            if characteristic.mayHaveDescriptors {
                var procedure = DiscoverAllCharacteristicDescriptors(of: characteristic)
                let step = try procedure.start()
                stage = .descriptors(service: service, characteristic: index, procedure)
                return try descriptorsStep(step, service: service, characteristic: index)
            }
            index += 1
        }
        return try nextService(from: service + 1)
    }
}

#endif  // !BLUEWIRE_NO_CENTRAL
