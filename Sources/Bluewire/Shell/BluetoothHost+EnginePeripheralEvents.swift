import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHostEngine

extension BluetoothHost {
    /// The peripheral events (`peripheralEvents()`) an engine event makes: a new link's after the
    /// shell recorded it (its `Connection` has the link's number), the others before the event
    /// changes the shell's links (a disconnected link still names its peer and role here).
    /// Advertising starting and stopping, its restart after connections and the indications' ends
    /// are the engine's; the shell reports them as peripheral events.
    func enginePeripheralEvent(_ event: HostEngineEvent) {
        // Writes to dynamic values raise no engine event: they are reported before the next one.
        publishDynamicWrites()
        switch event {
        case .connected(let link) where link.role == .peripheral:
            publishPeripheral(.connected(connectionValue(handle: link.handle, peer: link.peer, role: .peripheral)))
        case .disconnected(let handle, let reason):
            guard let link = shell.links[handle], link.role == .peripheral else { return }
            publishPeripheral(.disconnected(connection: handle, peer: link.peer, reason: reason))
        case .mtuChanged(let handle, let mtu):
            guard shell.links[handle]?.role == .peripheral else { return }
            publishPeripheral(.mtuChanged(connection: handle, mtu: mtu))
        case .server(let serverEvent):
            translate(serverEvent)
        case .serverRead(let connection, let handle, let offset, let value):
            publishPeripheral(.read(PeripheralRead(connection: connection, handle: handle, offset: offset, value: value)))
        case .serverRequestRefused(let connection, let request, let handle, let error):
            publishPeripheral(.requestRefused(connection: connection, request: request, handle: handle, error: error))
        case .advertisingStarted:
            let kind = engineHost.onSharedExecutor { $0.engine.advertisingLayout?.kind }.map(AdvertisingPlan.Kind.init)
            guard let kind = kind ?? shell.advertising?.plan.kind else { return }
            publishPeripheral(.advertisingStarted(kind))
        case .advertisingStopped:
            publishPeripheral(.advertisingStopped)
        default:
            break
        }
    }

    /// Dynamic write handlers run inside the engine's server, as it answers a central: the writes
    /// they accepted are published once the engine's outputs of that moment have been (a write
    /// answered with a Write Response, or a Write Command, raises no engine event of its own).
    func watchEngineDynamicWrites() {
        peripheral.dynamicWrites.onFirstRecord { [weak self] in
            Task { await self?.publishDynamicWrites() }
        }
    }
}
