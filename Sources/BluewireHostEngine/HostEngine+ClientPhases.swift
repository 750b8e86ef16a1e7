import BluewireCore
import BluewireATT
import BluewireGATT

// Left out of builds with BLUEWIRE_NO_CENTRAL (the peripheral firmware image): no GATT client.
#if !BLUEWIRE_NO_CENTRAL

// # GATT client procedures on the peer's state machine
//
// On a link the engine made as central, every GATT client procedure of the link's ATT bearer goes
// through the peer's `ConnectionStateMachine` (Docs/Design.md), as `BluetoothHost` does:
//
// - When an operation reaches the head of the link's queue (the bearer has one request outstanding
//   at a time, Core Vol 3 Part F §3.3.2), its trigger is fired: DiscoverServices for `.discoverAll`,
//   Read for the reads, Write for the writes and for a subscription's CCCD write. A refusal fails the
//   request with `.refused(state:trigger:)` and nothing is sent: a read or write before any
//   discovery (Connected.Idle) is such a refusal, as the table says.
// - `.discoverAll` fires OperationCompleted then DiscoverCharacteristics when it moves from services
//   to characteristics, so it ends in DiscoveredCharacteristic. A discovery that found no service
//   ends there too, through an empty characteristics stage: the database is known (it is empty),
//   and a read by handle (the application knows one the server does not list) goes out.
//   `.cachedDiscovery` fires DiscoverCharacteristics and OperationCompleted with no traffic, for an
//   application that knows the handles already (a bonded peer's cache, Core Vol 3 Part G §2.5.2).
// - The end of every procedure fires OperationCompleted: with its result, or with an ATT Error
//   Response (the server answered; the bearer is usable). A transaction timeout fires Failure with
//   `.att(.transactionTimeout)` instead (the bearer is unusable), and a disconnection fires
//   Disconnect (HostEngine+Connections): nothing more then.
// - A subscription's CCCD write that succeeded fires EnableNotifications (unless notifications are
//   enabled already), and the unsubscription of the last subscribed characteristic fires
//   DisableNotifications.
//
// Two kinds of client traffic are checked against the machine without moving it, because the table's
// one-procedure-at-a-time phases model the ATT bearer's single outstanding request and these do not
// hold it: Write Commands (no response, Part F §3.4.5.3, sent at once even while a request waits) and
// operations on Enhanced ATT bearers (Part G §5.3.2: they run in parallel with the ATT bearer's). Each
// is accepted when the peer's state, at rest, accepts its trigger (a characteristic has been
// discovered), and refused with `.refused` otherwise. A discovery on an EATT bearer that finds
// services (`.discoverAll`), or one inside a service (characteristics, includes, descriptors), moves
// a machine in Idle to DiscoveredCharacteristic, as `.cachedDiscovery` does.
//
// Links without a machine (the engine is peripheral and acts as GATT client too) are not checked.

extension ClientProcedure {
    /// The trigger that starts this procedure; nil for the MTU exchange, which the table does not model.
    var trigger: ConnectionTrigger? {
        switch self {
        case .discover: .discoverServices
        case .read, .readLong, .readMultiple: .read
        case .write, .writeLong, .configure: .write
        case .cachedDiscovery: .discoverCharacteristics
        case .exchangeMTU, .attRequest: nil
        #if !BLUEWIRE_NO_GATT_CLIENT_EXTRAS
        case .extra(let procedure): procedure.trigger
        #endif
        }
    }
}

extension GATTClientRequest {
    /// The trigger this request is checked against (see above); nil for the MTU exchange.
    var trigger: ConnectionTrigger? {
        switch self {
        case .discoverAll: .discoverServices
        case .read, .readLong, .readMultiple: .read
        case .write, .writeLong, .writeWithoutResponse, .signedWrite, .subscribe, .unsubscribe: .write
        case .cachedDiscovery: .discoverCharacteristics
        case .exchangeMTU, .attRequest, .attCommand: nil
        #if !BLUEWIRE_NO_GATT_CLIENT_EXTRAS
        case .discoverPrimaryServices: .discoverServices
        case .findIncludedServices, .discoverCharacteristics, .discoverDescriptors: .discoverCharacteristics
        case .readUsingCharacteristicUUID, .readMultipleVariableLength, .readMultipleConcatenated: .read
        case .writeLongAtOffset, .reliableWrite: .write
        #endif
        }
    }
}

extension ConnectionState {
    /// The state a connected peer returns to when its running Read or Write completes: where operations
    /// that do not hold the ATT bearer (commands, EATT) are checked.
    var atRest: ConnectionState {
        switch self {
        case .connected(.readingCharacteristic(let on)), .connected(.writingCharacteristic(let on)):
            on ? .connected(.notificationsEnabled) : .connected(.discoveredCharacteristic)
        default: self
        }
    }
}

extension HostEngine {
    /// Fires the head operation's starting trigger on the link's peer machine, once per operation (a
    /// request sent again after security was raised is the same phase). False if it was refused: the
    /// operation has been failed with `.refused` then.
    mutating func enterClientPhase(_ handle: UInt16) -> Bool {
        // By index, as in HostEngine+GATTClient: run for every request.
        guard let index = links.index(forKey: handle), let operation = links.values[index].clientOperations.first,
              !operation.phaseStarted else { return true }
        links.values[index].clientOperations[0].phaseStarted = true
        guard let peer = links.values[index].machinePeer, let trigger = operation.procedure.trigger else { return true }
        do throws(HostEngineError) {
            try fire(trigger, peer: peer)
            // A new discovery forgets the subscriptions, as the table's DiscoverServices does.
            if trigger == .discoverServices { links[handle]?.subscribedCharacteristics.removeAll() }
            return true
        } catch {
            links[handle]?.clientOperations[0].phaseStarted = false
            finishClientOperation(handle, .failure(error))
            return false
        }
    }

    /// After a response: `.discoverAll` left its services stage, so the machine moves from
    /// DiscoveringServices to DiscoveringCharacteristics through Idle.
    mutating func advanceDiscoveryPhase(_ handle: UInt16) {
        guard let index = links.index(forKey: handle), let operation = links.values[index].clientOperations.first, operation.phaseStarted,
              case .discover(let discovery) = operation.procedure, !discovery.isDiscoveringServices,
              let peer = links.values[index].machinePeer, state(of: peer) == .connected(.discoveringServices) else { return }
        // Accepted: DiscoveringServices takes OperationCompleted to Idle, which takes DiscoverCharacteristics.
        fireExpected(.operationCompleted, peer: peer)
        fireExpected(.discoverCharacteristics, peer: peer)
    }

    /// Fires what ends a finished operation's phase (see the file's header).
    mutating func leaveClientPhase(_ handle: UInt16, _ operation: ClientOperation, _ result: Result<HostCompletion, HostEngineError>) {
        guard operation.phaseStarted, let index = links.index(forKey: handle), let peer = links.values[index].machinePeer else { return }
        if case .failure(.disconnected) = result { return }
        if case .failure(.att(.transactionTimeout)) = result {
            // The bearer is unusable (Core Vol 3 Part F §3.3.3): Failure, from the phase the request was
            // in. Accepted in every state but Error, where an earlier failure left it.
            if state(of: peer) != .error { fireExpected(.failure, peer: peer, cause: .att(.transactionTimeout)) }
            return
        }
        // A procedure that fired no trigger ends no phase: the application's own request (its procedure
        // owns the phase, HostEngine+AppPhases) and the MTU exchange, which may run inside such a phase.
        guard operation.procedure.trigger != nil else { return }
        if case .success = result, case .discover = operation.procedure, state(of: peer) == .connected(.discoveringServices) {
            // No service, so no characteristics stage ran: the empty one, so that the discovered
            // state covers an empty database. Accepted: DiscoveringServices takes OperationCompleted
            // to Idle, which takes DiscoverCharacteristics.
            fireExpected(.operationCompleted, peer: peer)
            fireExpected(.discoverCharacteristics, peer: peer)
        }
        switch state(of: peer) {
        case .connected(.discoveringServices), .connected(.discoveringCharacteristics),
             .connected(.readingCharacteristic), .connected(.writingCharacteristic):
            // Accepted: each of these states takes OperationCompleted.
            fireExpected(.operationCompleted, peer: peer)
        default:
            // Error after a transaction timeout, or Initial after a disconnection: nothing to end.
            return
        }
        guard case .success = result, case .configure(let configure) = operation.procedure else { return }
        let subscribed = links[handle]?.subscribedCharacteristics
        if !configure.configuration.isEmpty {
            if subscribed?.contains(configure.characteristic.valueHandle) == false {
                links[handle]?.subscribedCharacteristics.append(configure.characteristic.valueHandle)
            }
            // Accepted: the write ended in DiscoveredCharacteristic, which takes EnableNotifications.
            if state(of: peer) == .connected(.discoveredCharacteristic) { fireExpected(.enableNotifications, peer: peer) }
        } else {
            links[handle]?.subscribedCharacteristics.removeAll { $0 == configure.characteristic.valueHandle }
            // Accepted: the write ended in NotificationsEnabled, which takes DisableNotifications.
            if subscribed?.allSatisfy({ $0 == configure.characteristic.valueHandle }) == true,
               state(of: peer) == .connected(.notificationsEnabled) {
                fireExpected(.disableNotifications, peer: peer)
            }
        }
    }

    /// A discovery on an EATT bearer makes the handles known as one on the ATT bearer would (an
    /// empty database included): a peer machine in Connected.Idle moves to DiscoveredCharacteristic
    /// (DiscoverCharacteristics, then OperationCompleted), so reads on either bearer are accepted after it.
    mutating func eattOperationFinished(_ handle: UInt16, _ operation: ClientOperation, _ result: Result<HostCompletion, HostEngineError>) {
        guard case .success(let completion) = result, completion.makesHandlesKnown,
              let peer = links[handle]?.machinePeer, state(of: peer) == .connected(.idle) else { return }
        // Accepted: Idle takes DiscoverCharacteristics, DiscoveringCharacteristics takes OperationCompleted.
        fireExpected(.discoverCharacteristics, peer: peer)
        fireExpected(.operationCompleted, peer: peer)
    }

    /// For traffic that does not hold the ATT bearer (Write Commands, EATT): refused unless the peer's
    /// state at rest accepts `request`'s trigger. Nil when allowed.
    func refusalOutsideQueue(_ handle: UInt16, _ request: GATTClientRequest) -> HostEngineError? {
        guard let peer = links[handle]?.machinePeer, let trigger = request.trigger else { return nil }
        let state = state(of: peer).atRest
        guard ConnectionStateMachine.transition(from: state, on: trigger) == nil else { return nil }
        return .refused(state: state, trigger: trigger)
    }
}

extension HostCompletion {
    /// A discovery's completion after which the peer's machine, on the ATT bearer, would be in
    /// DiscoveredCharacteristic: `.discoverAll`'s, and those of discoveries inside a service.
    var makesHandlesKnown: Bool {
        switch self {
        case .services: true
        #if !BLUEWIRE_NO_GATT_CLIENT_EXTRAS
        case .characteristics, .includedServices, .descriptors: true
        #endif
        default: false
        }
    }
}

#endif  // !BLUEWIRE_NO_CENTRAL
