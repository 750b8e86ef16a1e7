import BluewireCore
import BluewireGATT
import BluewireHostEngine

extension BluetoothHost {
    /// The host's cause for an engine failure of `peer`'s machine: an ATT bearer failure (the
    /// transaction timeout) is a GATT one, the transport ending names the transport's error, the
    /// rest are host errors naming the peer.
    func engineFailureCause(_ error: HostEngineError, peer: BluetoothAddress) -> ConnectionFailureCause {
        switch error {
        case .att(let bearer):
            return .gatt(.bearer(bearer))
        case .transportEnded:
            return .host(engineHostError(error))
        default:
            return .host(HostError(engine: error, peer: peer))
        }
    }

    func engineState(_ engineHost: EngineHost, of address: BluetoothAddress) -> ConnectionState {
        engineHost.onSharedExecutor(passing: address) { $0.engine.state(of: $1) }
    }

    func engineFailure(_ engineHost: EngineHost, of address: BluetoothAddress) -> ConnectionFailureCause? {
        engineHost.onSharedExecutor(passing: address) { $0.engine.failure(of: $1) }.map { engineFailureCause($0, peer: address) }
    }

    func engineTransitions(of address: BluetoothAddress) -> AsyncStream<PeerTransition> {
        let (stream, continuation) = AsyncStream<PeerTransition>.makeStream(bufferingPolicy: .unbounded)
        guard phase != .closed else {
            continuation.finish()
            return stream
        }
        let id = nextObserverID
        nextObserverID += 1
        shell.peerObservers[address, default: [:]][id] = continuation
        // Registered first, so the StartScan of a peer that becomes known while a scan runs is reported.
        _ = enginePerformNow(engineHost, .watch(address))
        continuation.onTermination = { _ in Task { await self.endEnginePeerObserver(address, id) } }
        return stream
    }

    func endEnginePeerObserver(_ address: BluetoothAddress, _ id: UInt64) {
        shell.peerObservers[address]?[id] = nil
        if shell.peerObservers[address]?.isEmpty == true { shell.peerObservers[address] = nil }
    }

    func engineReset(_ engineHost: EngineHost, _ address: BluetoothAddress) throws(HostError) {
        switch enginePerformNow(engineHost, .reset(address)) {
        case .failure(let error)?: throw HostError(engine: error, peer: address)
        case .success?, nil: return
        }
    }
}
