import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI

// Left out of builds with BLUEWIRE_NO_CENTRAL (the peripheral firmware image); HostEngine+NoCentral stands in.
#if !BLUEWIRE_NO_CENTRAL

/// One GATT client procedure in progress, a closed set (no existentials).
enum ClientProcedure: Sendable {
    case discover(DiscoverDatabase)
    case read(ReadCharacteristicValue)
    case readLong(ReadLongCharacteristicValues)
    case readMultiple(ReadMultipleValues)
    case write(WriteCharacteristicValue)
    case writeLong(PreparedWrites)
    case configure(ConfigureClientCharacteristicConfiguration)
    case exchangeMTU
    /// `.cachedDiscovery`: no traffic, only the state machine's phase.
    case cachedDiscovery
    /// `.attRequest`: the application's own request; its answer, whatever it is, finishes it.
    case attRequest(ATTPDU)
    #if !BLUEWIRE_NO_GATT_CLIENT_EXTRAS
    /// Discovery step by step, read by UUID, strict Read Multiple (HostEngine+ClientExtras).
    case extra(ClientExtraProcedure)
    #endif

    enum Step { case request(ATTPDU), finished(HostCompletion) }

    mutating func start() throws(GATTClientError) -> Step {
        switch self {
        case .discover(var p): let s = try p.start(); self = .discover(p); return Self.map(s) { .services($0) }
        case .read(var p): let s = try p.start(); self = .read(p); return Self.map(s) { .value($0) }
        case .readLong(var p): let s = try p.start(); self = .readLong(p); return Self.map(s) { .value($0) }
        case .readMultiple(var p): let s = try p.start(); self = .readMultiple(p); return Self.map(s) { .values($0) }
        case .write(var p): let s = try p.start(); self = .write(p); return Self.map(s) { _ in .done }
        case .writeLong(var p): let s = try p.start(); self = .writeLong(p); return Self.map(s) { _ in .done }
        case .configure(var p): let s = try p.start(); self = .configure(p); return Self.map(s) { .configured(descriptorHandle: $0) }
        case .exchangeMTU, .cachedDiscovery: return .finished(.done)
        case .attRequest(let pdu): return .request(pdu)
        #if !BLUEWIRE_NO_GATT_CLIENT_EXTRAS
        case .extra(var p): let s = try p.step(nil); self = .extra(p); return s
        #endif
        }
    }

    mutating func receive(_ response: ATTPDU) throws(GATTClientError) -> Step {
        switch self {
        case .discover(var p): let s = try p.receive(response); self = .discover(p); return Self.map(s) { .services($0) }
        case .read(var p): let s = try p.receive(response); self = .read(p); return Self.map(s) { .value($0) }
        case .readLong(var p): let s = try p.receive(response); self = .readLong(p); return Self.map(s) { .value($0) }
        case .readMultiple(var p): let s = try p.receive(response); self = .readMultiple(p); return Self.map(s) { .values($0) }
        case .write(var p): let s = try p.receive(response); self = .write(p); return Self.map(s) { _ in .done }
        case .writeLong(var p): let s = try p.receive(response); self = .writeLong(p); return Self.map(s) { _ in .done }
        case .configure(var p): let s = try p.receive(response); self = .configure(p); return Self.map(s) { .configured(descriptorHandle: $0) }
        case .exchangeMTU, .cachedDiscovery: return .finished(.done)
        case .attRequest: return .finished(.attResponse(response))
        #if !BLUEWIRE_NO_GATT_CLIENT_EXTRAS
        case .extra(var p): let s = try p.step(response); self = .extra(p); return s
        #endif
        }
    }

    static func map<Output>(_ step: GATTProcedureStep<Output>, _ done: (Output) -> HostCompletion) -> Step {
        switch step {
        case .request(let pdu): return .request(pdu)
        case .finished(let output): return .finished(done(output))
        }
    }
}

/// A queued GATT client operation on one link.
struct ClientOperation: Sendable {
    /// The application's request; nil for one the engine queues itself (HostEngine+ClientFeatures).
    var id: HostRequestID?
    var procedure: ClientProcedure
    /// The ATT request in flight for it, once started.
    var request: ATTRequestID?
    /// The procedure as asked for, to start again once security is raised (HostEngine+ClientSecurity).
    var original: ClientProcedure
    /// Refused for security once and sent again: a second refusal ends it.
    var securityRetried = false
    /// Parked until the link's encryption changes.
    var awaitingSecurity = false
    /// Its trigger has been fired on the peer's state machine (HostEngine+ClientPhases).
    var phaseStarted = false

    init(id: HostRequestID?, procedure: ClientProcedure) {
        self.id = id
        self.procedure = procedure
        self.original = procedure
    }
}

extension HostEngine {
    // The link is reached by index, `links.values[index]`, on the path every request takes: a copy
    // (`links[handle]`) retains all the link holds and leaves its queue shared, so the append copies
    // it, and `links[handle]?.` heap-allocates the dictionary's coroutine frames on every access.

    mutating func gattClient(_ id: HostRequestID, _ connection: UInt16, _ operation: GATTClientRequest) {
        guard let linkIndex = links.index(forKey: connection) else { return complete(id, .failure(.unknownConnection(connection))) }
        let mtu = links.values[linkIndex].bearer.mtu
        let procedure: ClientProcedure
        switch operation {
        case .discoverAll: procedure = .discover(DiscoverDatabase())
        case .read(let handle): procedure = .read(ReadCharacteristicValue(handle: handle))
        case .readLong(let handle): procedure = .readLong(ReadLongCharacteristicValues(handle: handle, mtu: mtu))
        case .readMultiple(let handles):
            procedure = .readMultiple(ReadMultipleValues(handles: handles, mtu: mtu, useVariableLength: !links.values[linkIndex].readMultipleVariableRefused))
        case .write(let handle, let value): procedure = .write(WriteCharacteristicValue(handle: handle, value: value, mtu: mtu))
        case .writeLong(let handle, let value): procedure = .writeLong(.writeLong(handle: handle, value: value, mtu: mtu))
        case .writeWithoutResponse(let handle, let value), .signedWrite(let handle, let value):
            // A command: no transaction, nothing to wait for (Core Vol 3 Part F §3.4.5.3).
            if let refusal = refusalOutsideQueue(connection, operation) { return complete(id, .failure(refusal)) }
            var command: ATTPDU
            do throws(GATTClientError) {
                command = try WriteWithoutResponse.command(handle: handle, value: value, mtu: mtu)
            } catch {
                return complete(id, .failure(.gatt(error)))
            }
            if case .signedWrite = operation {
                // Signed by the Security Manager (HostEngine+SignedWrites), unless the link is encrypted.
                switch signedWriteCommand(connection, handle: handle, value: value, mtu: mtu) {
                case .success(let signed?): command = signed
                case .success(nil): break
                case .failure(let error): return complete(id, .failure(error))
                }
            }
            do throws(ATTBearerError) {
                try links[connection]?.bearer.send(command: command)
            } catch {
                return complete(id, .failure(.att(error)))
            }
            drainBearer(handle: connection)
            return complete(id, .success(.done))
        case .subscribe(let characteristic, let indications, let descriptor):
            procedure = .configure(.subscribe(to: characteristic, indications: indications, descriptorHandle: descriptor))
        case .unsubscribe(let characteristic, let descriptor):
            procedure = .configure(.unsubscribe(from: characteristic, descriptorHandle: descriptor))
        case .exchangeMTU: procedure = .exchangeMTU
        case .cachedDiscovery: procedure = .cachedDiscovery
        case .attRequest(let pdu):
            if let refusal = ATTPDUKind.refusal(request: pdu) { return complete(id, .failure(refusal)) }
            procedure = .attRequest(pdu)
        case .attCommand(let pdu):
            return sendATTCommand(id, connection, pdu)
        #if !BLUEWIRE_NO_GATT_CLIENT_EXTRAS
        case .discoverPrimaryServices, .findIncludedServices, .discoverCharacteristics, .discoverDescriptors,
             .readUsingCharacteristicUUID, .readMultipleVariableLength, .readMultipleConcatenated,
             .writeLongAtOffset, .reliableWrite:
            // Always built (the cases listed are exactly the ones it builds).
            guard let extra = ClientProcedure(extra: operation, mtu: mtu) else { return complete(id, .failure(.notSupported)) }
            procedure = extra
        #endif
        }
        // `linkIndex` still holds: only the command branch above touched the links, and it returned.
        links.values[linkIndex].clientOperations.append(ClientOperation(id: id, procedure: procedure))
        if links.values[linkIndex].clientOperations.count == 1 { startClientOperation(connection) }
    }

    /// Starts the head operation of the link's queue (and the next ones that finish without ATT).
    mutating func startClientOperation(_ handle: UInt16) {
        while let index = links.index(forKey: handle), links.values[index].clientOperations.first?.awaitingSecurity == false {
            guard enterClientPhase(handle) else { continue }
            guard let index = links.index(forKey: handle), var operation = links.values[index].clientOperations.first else { return }
            if case .exchangeMTU = operation.procedure {
                do throws(ATTBearerError) {
                    guard let request = try links[handle]?.bearer.exchangeMTU(now: now) else { return }
                    links[handle]?.clientOperations[0].request = request
                    drainBearer(handle: handle)
                    return
                } catch {
                    finishClientOperation(handle, .failure(.att(error)))
                    continue
                }
            }
            let step: ClientProcedure.Step
            do throws(GATTClientError) {
                step = try operation.procedure.start()
            } catch {
                finishClientOperation(handle, .failure(.gatt(error)))
                continue
            }
            links.values[index].clientOperations[0] = operation
            guard sendClientStep(step, handle: handle) else { continue }
            return
        }
    }

    /// Sends the step's request, or finishes the head operation. True while it waits for a response.
    mutating func sendClientStep(_ step: ClientProcedure.Step, handle: UInt16) -> Bool {
        switch step {
        case .finished(let completion):
            finishClientOperation(handle, .success(completion))
            return false
        case .request(let pdu):
            guard let index = links.index(forKey: handle) else { return false }
            do throws(ATTBearerError) {
                let request = try links.values[index].bearer.send(request: pdu, now: now)
                links.values[index].clientOperations[0].request = request
            } catch {
                finishClientOperation(handle, .failure(.att(error)))
                return false
            }
            drainBearer(handle: handle)
            return true
        }
    }

    mutating func finishClientOperation(_ handle: UInt16, _ result: Result<HostCompletion, HostEngineError>) {
        guard let index = links.index(forKey: handle), !links.values[index].clientOperations.isEmpty else { return }
        let operation = links.values[index].clientOperations.removeFirst()
        leaveClientPhase(handle, operation, result)
        clientOperationFinished(handle, operation, result)
        complete(operation.id, result)
    }

    /// The bearer's answer to a client request.
    mutating func clientResponse(_ id: ATTRequestID, _ result: Result<ATTPDU, ATTBearerError>, handle: UInt16) {
        guard let index = links.index(forKey: handle), var operation = links.values[index].clientOperations.first,
              operation.request == id else { return }
        switch result {
        case .failure(let error):
            finishClientOperation(handle, .failure(error == .disconnected ? .disconnected(.connectionTerminatedByLocalHost) : .att(error)))
        case .success(let pdu):
            if case .exchangeMTU = operation.procedure {
                finishClientOperation(handle, .success(.mtu(links[handle]?.bearer.mtu ?? ATTBearer.defaultMTU)))
                break
            }
            let step: ClientProcedure.Step
            do throws(GATTClientError) {
                step = try operation.procedure.receive(pdu)
            } catch {
                if let code = error.attErrorCode, raiseSecurityForClient(handle, code) { return }
                finishClientOperation(handle, .failure(.gatt(error)))
                startClientOperation(handle)
                return
            }
            operation.request = nil
            // `index` still holds: nothing since the guard added or removed a link.
            links.values[index].clientOperations[0] = operation
            advanceDiscoveryPhase(handle)
            if sendClientStep(step, handle: handle) { return }
        }
        startClientOperation(handle)
    }
}

#endif  // !BLUEWIRE_NO_CENTRAL
