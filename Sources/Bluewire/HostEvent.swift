import BluewireCore
import BluewireGATT
import BluewireHCI

/// Something that happened on the Host, for observers (`Host.events()`): connections coming and
/// going, link parameter changes, the local GATT server's activity, controller faults.
public enum HostEvent: Sendable {
    /// A connection completed (either role). For the peripheral role this is how a central arrives.
    case connected(Connection)
    /// A connection ended, with the reason the controller reported (Core Vol 1 Part F).
    case disconnected(handle: UInt16, peer: BluetoothAddress, reason: HCIStatus)
    case connectionUpdated(handle: UInt16, interval: UInt16, latency: UInt16, timeout: UInt16)
    case dataLengthChanged(handle: UInt16, maxTxOctets: UInt16, maxRxOctets: UInt16)
    case phyUpdated(handle: UInt16, tx: UInt8, rx: UInt8)
    case mtuChanged(handle: UInt16, mtu: Int)
    case advertisingSetTerminated(handle: UInt8, status: HCIStatus, connectionHandle: UInt16)
    /// The local GATT server saw a subscription change, a write, a confirmation...
    case server(GATTServerEvent)
    /// The controller reported a hardware error and was reset.
    case hardwareError(code: UInt8)
}

extension BluetoothHost {
    /// Events from now on, until the Host closes. Each call gets its own sequence.
    public func events() -> AsyncStream<HostEvent> {
        let (stream, continuation) = AsyncStream<HostEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = nextObserverID
        nextObserverID += 1
        eventObservers[id] = continuation
        continuation.onTermination = { _ in Task { await self.removeObserver(id) } }
        return stream
    }

    func removeObserver(_ id: UInt64) { eventObservers[id] = nil }

    func publish(_ event: HostEvent) {
        for observer in eventObservers.values { observer.yield(event) }
    }
}
