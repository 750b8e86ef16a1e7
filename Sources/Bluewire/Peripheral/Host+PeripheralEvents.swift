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
            publishPeripheral(.indicationConfirmed(connection: connection, handle: handle))
        case .indicationDropped(let connection, let handle):
            publishPeripheral(.indicationDropped(connection: connection, handle: handle))
        }
    }

    /// Publishes the writes dynamic handlers accepted during the last server call.
    func publishDynamicWrites() {
        for write in peripheral.dynamicWrites.take() { publishPeripheral(.write(write)) }
    }

    /// The Host is closing: end every peripheral sequence and wake every waiter.
    func finishPeripheral() {
        for observer in peripheral.observers.values { observer.finish() }
        peripheral.observers.removeAll()
    }
}
