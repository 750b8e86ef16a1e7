import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireL2CAP

// Left out of builds with BLUEWIRE_NO_CHANNELS or BLUEWIRE_NO_CENTRAL (the firmware images);
// HostEngine+NoChannels or HostEngine+NoCentral stands in.
#if !BLUEWIRE_NO_CHANNELS && !BLUEWIRE_NO_CENTRAL

/// Enhanced ATT, client side (Core Vol 3 Part G §5.3.2, Part F §3.2.11): `.openEnhancedChannels` to
/// SPSM 0x0027 opens EATT bearers, and `.gattOnEATT` runs GATT client procedures on one of them.
/// Each bearer has its own queue, one ATT request at a time (Part F §3.3.2), so procedures on
/// different bearers run at once. ATT_MTU is the bearer's (the smaller channel MTU, Part G §5.3.1):
/// `.exchangeMTU` only reports it.
extension HostEngine {
    mutating func gattOnEATT(_ id: HostRequestID, _ handle: UInt16, _ cid: UInt16, _ operation: GATTClientRequest) {
        guard let index = links.index(forKey: handle) else { return complete(id, .failure(.unknownConnection(handle))) }
        guard let mtu = links.values[index].channels.eattBearers[cid]?.mtu else {
            return complete(id, .failure(.channel(.unknownChannel(cid))))
        }
        // Checked against the peer's state machine without moving it (HostEngine+ClientPhases).
        if let refusal = refusalOutsideQueue(handle, operation) { return complete(id, .failure(refusal)) }
        let procedure: ClientProcedure
        switch operation {
        case .discoverAll: procedure = .discover(DiscoverDatabase())
        case .read(let attribute): procedure = .read(ReadCharacteristicValue(handle: attribute))
        case .readLong(let attribute): procedure = .readLong(ReadLongCharacteristicValues(handle: attribute, mtu: mtu))
        case .readMultiple(let handles):
            // Read Multiple Variable Length is mandatory on a server with EATT (Core Vol 3 Part G Table 4.2).
            procedure = .readMultiple(ReadMultipleValues(handles: handles, mtu: mtu))
        case .write(let attribute, let value): procedure = .write(WriteCharacteristicValue(handle: attribute, value: value, mtu: mtu))
        case .writeLong(let attribute, let value): procedure = .writeLong(.writeLong(handle: attribute, value: value, mtu: mtu))
        case .writeWithoutResponse(let attribute, let value), .signedWrite(let attribute, let value):
            // An EATT bearer is always encrypted: a signed write goes as a plain Write Command (§4.9.2).
            do throws(GATTClientError) {
                let command = try WriteWithoutResponse.command(handle: attribute, value: value, mtu: mtu)
                do throws(ATTBearerError) {
                    try links.values[index].channels.eattBearers[cid]?.send(command: command)
                } catch {
                    return complete(id, .failure(.att(error)))
                }
            } catch {
                return complete(id, .failure(.gatt(error)))
            }
            drainEATT(cid: cid, handle: handle)
            return complete(id, .success(.done))
        case .subscribe(let characteristic, let indications, let descriptor):
            procedure = .configure(.subscribe(to: characteristic, indications: indications, descriptorHandle: descriptor))
        case .unsubscribe(let characteristic, let descriptor):
            procedure = .configure(.unsubscribe(from: characteristic, descriptorHandle: descriptor))
        case .exchangeMTU:
            return complete(id, .success(.mtu(mtu)))
        case .cachedDiscovery:
            // No traffic on any bearer: only the peer's state machine, which the ATT bearer's queue drives.
            return gattClient(id, handle, operation)
        case .attRequest(let pdu):
            if let refusal = ATTPDUKind.refusal(request: pdu) { return complete(id, .failure(refusal)) }
            procedure = .attRequest(pdu)
        case .attCommand(let pdu):
            if let refusal = ATTPDUKind.refusal(command: pdu) { return complete(id, .failure(refusal)) }
            do throws(ATTBearerError) {
                try links.values[index].channels.eattBearers[cid]?.send(command: pdu)
            } catch {
                return complete(id, .failure(.att(error)))
            }
            drainEATT(cid: cid, handle: handle)
            return complete(id, .success(.done))
        #if !BLUEWIRE_NO_GATT_CLIENT_EXTRAS
        case .discoverPrimaryServices, .findIncludedServices, .discoverCharacteristics, .discoverDescriptors,
             .readUsingCharacteristicUUID, .readMultipleVariableLength, .readMultipleConcatenated,
             .writeLongAtOffset, .reliableWrite:
            // At the bearer's own ATT_MTU (Core Vol 3 Part G §5.3.1).
            guard let extra = ClientProcedure(extra: operation, mtu: mtu) else { return complete(id, .failure(.notSupported)) }
            procedure = extra
        #endif
        }
        links.values[index].channels.eattClientOperations[cid, default: []].append(ClientOperation(id: id, procedure: procedure))
        if links.values[index].channels.eattClientOperations[cid]?.count == 1 { startEATTOperation(handle, cid) }
    }

    /// Queues an operation for the first free EATT bearer of the link and hands out what can go now.
    mutating func gattOnAnyEATTBearer(_ id: HostRequestID, _ handle: UInt16, _ operation: GATTClientRequest) {
        guard let index = links.index(forKey: handle) else { return complete(id, .failure(.unknownConnection(handle))) }
        guard !links.values[index].channels.eattBearers.isEmpty else {
            return complete(id, .failure(.noEATTBearer(connection: handle)))
        }
        links.values[index].channels.sharedEATTOperations.append((id, operation))
        dispatchSharedEATTOperations(handle)
    }

    /// Gives each bearer with nothing queued the oldest waiting operation (lowest CID first), so no
    /// bearer ever has a second request outstanding while another sits idle.
    mutating func dispatchSharedEATTOperations(_ handle: UInt16) {
        while let index = links.index(forKey: handle), let next = links.values[index].channels.sharedEATTOperations.first {
            let channels = links.values[index].channels
            guard let cid = channels.eattBearers.keys.sorted().first(where: { channels.eattClientOperations[$0]?.isEmpty ?? true })
            else { return }
            links.values[index].channels.sharedEATTOperations.removeFirst()
            gattOnEATT(next.id, handle, cid, next.operation)
        }
    }

    /// Starts the head operation of the bearer's queue (and the next ones that finish at once);
    /// once the queue is empty the bearer takes the next operation waiting for any bearer.
    mutating func startEATTOperation(_ handle: UInt16, _ cid: UInt16) {
        defer {
            if links[handle]?.channels.eattClientOperations[cid]?.isEmpty ?? true,
               links[handle]?.channels.sharedEATTOperations.isEmpty == false {
                dispatchSharedEATTOperations(handle)
            }
        }
        while var operation = links[handle]?.channels.eattClientOperations[cid]?.first {
            let step: ClientProcedure.Step
            do throws(GATTClientError) {
                step = try operation.procedure.start()
            } catch {
                finishEATTOperation(handle, cid, .failure(.gatt(error)))
                continue
            }
            links[handle]?.channels.eattClientOperations[cid]?[0] = operation
            if sendEATTStep(step, handle, cid) { return }
        }
    }

    /// Sends the step's request, or finishes the head operation. True while it waits for a response.
    mutating func sendEATTStep(_ step: ClientProcedure.Step, _ handle: UInt16, _ cid: UInt16) -> Bool {
        switch step {
        case .finished(let completion):
            finishEATTOperation(handle, cid, .success(completion))
            return false
        case .request(let pdu):
            do throws(ATTBearerError) {
                guard let request = try links[handle]?.channels.eattBearers[cid]?.send(request: pdu, now: now) else {
                    finishEATTOperation(handle, cid, .failure(.channel(.unknownChannel(cid))))
                    return false
                }
                links[handle]?.channels.eattClientOperations[cid]?[0].request = request
            } catch {
                finishEATTOperation(handle, cid, .failure(.att(error)))
                return false
            }
            drainEATT(cid: cid, handle: handle)
            return true
        }
    }

    mutating func finishEATTOperation(_ handle: UInt16, _ cid: UInt16, _ result: Result<HostCompletion, HostEngineError>) {
        guard let operation = links[handle]?.channels.eattClientOperations[cid]?.first else { return }
        links[handle]?.channels.eattClientOperations[cid]?.removeFirst()
        eattOperationFinished(handle, operation, result)
        complete(operation.id, result)
    }

    /// The EATT bearer's answer to a client request.
    mutating func eattClientResponse(
        _ id: ATTRequestID, _ result: Result<ATTPDU, ATTBearerError>, handle: UInt16, cid: UInt16
    ) {
        guard var operation = links[handle]?.channels.eattClientOperations[cid]?.first, operation.request == id else { return }
        switch result {
        case .failure(let error):
            finishEATTOperation(handle, cid, .failure(.att(error)))
        case .success(let pdu):
            let step: ClientProcedure.Step
            do throws(GATTClientError) {
                step = try operation.procedure.receive(pdu)
            } catch {
                finishEATTOperation(handle, cid, .failure(.gatt(error)))
                startEATTOperation(handle, cid)
                return
            }
            operation.request = nil
            links[handle]?.channels.eattClientOperations[cid]?[0] = operation
            if sendEATTStep(step, handle, cid) { return }
        }
        startEATTOperation(handle, cid)
    }
}

#endif  // !BLUEWIRE_NO_CHANNELS && !BLUEWIRE_NO_CENTRAL
