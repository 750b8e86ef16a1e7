import BluewireCore
import BluewireHCI
import BluewireHostEngine

extension BluetoothHost {
    /// One engine event, as the host reports it: `HostEvent`s to `events()`
    /// observers, and the Hardware Error recovery the engine leaves to its application.
    func engineEvent(_ event: HostEngineEvent) {
        // A new link is recorded first, so the `Connection` a peripheral event carries has its number;
        // an ended one after, so the peripheral event still finds its peer and role.
        if case .connected(let link) = event { engineLinkUp(link) }
        enginePeripheralEvent(event)
        switch event {
        case .connected(let link):
            publish(.connected(connectionValue(handle: link.handle, peer: link.peer, role: LinkRole(link.role))))
        case .disconnected(let handle, let reason):
            guard let link = engineLinkDown(handle: handle, reason: reason) else { return }
            publish(.disconnected(handle: handle, peer: link.peer, reason: reason))
        case .stateChanged(let peer, let transition, let cause):
            let reportedCause = cause.map { engineFailureCause($0, peer: peer) }
            for link in shell.links.values where link.peer == peer { link.gattClient?.record(transition, cause: reportedCause) }
            guard let observers = shell.peerObservers[peer], !observers.isEmpty else { return }
            let reported = PeerTransition(peer: peer, transition: transition, cause: reportedCause)
            for observer in observers.values { observer.yield(reported) }
        case .connectionUpdated(let handle, let interval, let latency, let timeout):
            publish(.connectionUpdated(handle: handle, interval: interval, latency: latency, timeout: timeout))
        case .dataLengthChanged(let handle, let maxTxOctets, _, let maxRxOctets, _):
            publish(.dataLengthChanged(handle: handle, maxTxOctets: maxTxOctets, maxRxOctets: maxRxOctets))
        case .phyUpdated(let handle, let tx, let rx):
            publish(.phyUpdated(handle: handle, tx: tx, rx: rx))
        case .mtuChanged(let handle, let mtu):
            publish(.mtuChanged(handle: handle, mtu: mtu))
        case .server(let serverEvent):
            publish(.server(serverEvent))
        case .advertisingSetTerminated(let handle, let status, let connectionHandle, _):
            publish(.advertisingSetTerminated(handle: handle, status: status, connectionHandle: connectionHandle))
        case .deviceFound(let device):
            engineDeviceFound(device)
        case .scanStateChanged(let transition, let cause):
            engineScanTransition(transition, cause: cause)
        case .hardwareError(let code):
            engineHardwareError(code: code)
        case .controllerFault(let fault):
            // The engine went on without what the controller owed it (a cancelled attempt's end):
            // the controller's fault, logged as such.
            log.hci.error("\(fault)")
        default:
            break
        }
    }

    /// A Hardware Error (Core Vol 4 Part E §7.7.16). The engine failed what was under way and put
    /// every peer in Error; the shell brings the controller up again with the
    /// same address before it reports the error, and closes if the controller does not come back.
    func engineHardwareError(code: UInt8) {
        log.hci.error("hardware error 0x\(hex(code, width: 2)); resetting the controller")
        commandCancellationCause = .hardwareError(code: code)
        guard phase == .running, !shell.recovering else { return }
        shell.recovering = true
        phase = .starting
        Task { await self.recoverEngine(engineHost, code: code) }
    }

    func recoverEngine(_ engineHost: EngineHost, code: UInt8) async {
        let result = await engineHost.perform(.start)
        shell.recovering = false
        guard phase == .starting else { return }
        switch result {
        case .success(.started(let info)):
            controller = info
            phase = .running
            await engineRestartAdvertising(engineHost)
            publish(.hardwareError(code: code))
        default:
            log.hci.error("controller did not come back after a hardware error: \(result)")
            await engineClose(engineHost)
        }
    }
}
