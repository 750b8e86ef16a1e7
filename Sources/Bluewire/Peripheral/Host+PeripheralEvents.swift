import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI

extension BluetoothHost {
    /// Peripheral-role events from now on (`PeripheralEvent`), until the Host closes. Each call gets
    /// its own sequence, which buffers until iterated.
    public func peripheralEvents() -> AsyncStream<PeripheralEvent> {
        let (stream, continuation) = AsyncStream<PeripheralEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = nextObserverID
        nextObserverID += 1
        peripheral.observers[id] = continuation
        continuation.onTermination = { _ in Task { await self.removePeripheralObserver(id) } }
        return stream
    }

    func removePeripheralObserver(_ id: UInt64) { peripheral.observers[id] = nil }

    func publishPeripheral(_ event: PeripheralEvent) {
        for observer in peripheral.observers.values { observer.yield(event) }
    }

    /// Sees every Host event as it is published and derives the peripheral role's from it:
    /// centrals arriving and leaving restart advertising and settle indications; server events
    /// become peripheral events.
    func peripheralObserve(_ event: HostEvent) {
        switch event {
        case .connected(let connection) where connection.role == .peripheral:
            peripheral.centrals.insert(connection.handle)
            advertisingStartedBeforeConnection()
            publishPeripheral(.connected(connection))
            advertisingConnectionCreated()
        case .disconnected(let handle, let peer, let reason) where peripheral.centrals.contains(handle):
            peripheral.centrals.remove(handle)
            while peripheral.indicationTickets[handle] != nil { settleIndication(on: handle, .disconnected) }
            publishPeripheral(.disconnected(connection: handle, peer: peer, reason: reason))
            Task { await self.resumeAdvertising() }
        case .mtuChanged(let handle, let mtu) where peripheral.centrals.contains(handle):
            publishPeripheral(.mtuChanged(connection: handle, mtu: mtu))
        case .advertisingSetTerminated(_, let status, _):
            advertisingSetTerminated(status: status)
        case .server(let serverEvent):
            translate(serverEvent)
        default:
            break
        }
    }

    func translate(_ event: GATTServerEvent) {
        switch event {
        case .mtuExchanged:
            // The bearer answers MTU exchanges; `mtuChanged` reports them.
            break
        case .subscriptionChanged(let subscription):
            publishPeripheral(.subscriptionChanged(subscription))
        case .valueWritten(let connection, let handle, let value):
            publishPeripheral(.write(PeripheralWrite(connection: connection, handle: handle, value: value, offset: 0, kind: nil)))
        case .indicationConfirmed(let connection, let handle):
            settleIndication(on: connection, nil)
            publishPeripheral(.indicationConfirmed(connection: connection, handle: handle))
        case .indicationDropped(let connection, let handle):
            publishPeripheral(.indicationDropped(connection: connection, handle: handle))
        }
    }

    /// Publishes the writes dynamic handlers accepted during the last server call.
    func publishDynamicWrites() {
        for write in peripheral.dynamicWrites.take() { publishPeripheral(.write(write)) }
    }

    /// Reports a request the server answered: the reads it served and the requests it refused.
    func observeServerResponse(to request: ATTPDU, response: ATTPDU, on connection: UInt16) {
        if case .errorResponse(let opcode, let handle, let error) = response {
            // Attribute Not Found is how discovery ends (Core Vol 3 Part G §4.4.1), not a refusal.
            guard error != .attributeNotFound else { return }
            publishPeripheral(.requestRefused(connection: connection, request: opcode, handle: handle, error: error))
            return
        }
        switch (request, response) {
        case (.readRequest(let handle), .readResponse(let value)):
            publishPeripheral(.read(PeripheralRead(connection: connection, handle: handle, offset: 0, value: Array(value))))
        case (.readBlobRequest(let handle, let offset), .readBlobResponse(let value)):
            publishPeripheral(.read(PeripheralRead(connection: connection, handle: handle, offset: Int(offset), value: Array(value))))
        case (.readMultipleRequest(let handles), _), (.readMultipleVariableRequest(let handles), _):
            for handle in handles {
                publishPeripheral(.read(PeripheralRead(connection: connection, handle: handle, offset: 0, value: nil)))
            }
        case (.readByTypeRequest(_, _, let type), .readByTypeResponse(let list)) where !BluetoothHost.isDeclaration(type):
            for entry in list.entries {
                publishPeripheral(.read(PeripheralRead(connection: connection, handle: entry.handle, offset: 0, value: Array(entry.value))))
            }
        default:
            break
        }
    }

    /// GATT declaration types, read during discovery rather than as values.
    static func isDeclaration(_ type: BluetoothUUID) -> Bool {
        type == .primaryService || type == .secondaryService || type == .include || type == .characteristic
    }

    /// The Host is closing: end every peripheral sequence and wake every waiter.
    func finishPeripheral() {
        for handle in Array(peripheral.indicationTickets.keys) {
            while peripheral.indicationTickets[handle] != nil { settleIndication(on: handle, .disconnected) }
        }
        peripheral.advertising.isEnabled = false
        peripheral.advertising.advertisement = nil
        peripheral.advertising.plan = nil
        for observer in peripheral.observers.values { observer.finish() }
        peripheral.observers.removeAll()
    }
}
