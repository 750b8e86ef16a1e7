import Bluewire
import Foundation

/// The event loop of `serve --db`: prints each engine event that concerns the centrals (the pairing
/// prompts too, which the host's `PairingAnswers` answers from the options), relays writes of
/// notifying or indicating characteristics to their subscribers, and writes the bond file after a
/// bonding pairing.
struct ServeEngineLoop: Sendable {
    let host: EngineHost
    let output: ServeOutput
    let centrals: ServeCentrals
    let pairing: ServePairingOptions
    /// The bond file: new bonds are saved to it unless it was left out (another local identity).
    let keys: KeyFileIdentity

    func run(_ events: AsyncStream<HostEngineEvent>) async {
        for await event in events {
            switch event {
            case .connected(let connection) where connection.role == .peripheral:
                centrals.peers.withLock { $0[connection.handle] = connection.peer }
                output.connected(connection.handle, peer: connection.peer)
            case .disconnected(let handle, let reason):
                guard let peer = centrals.peers.withLock({ $0.removeValue(forKey: handle) }) else { continue }
                output.print(.disconnected(connection: handle, peer: peer, reason: reason))
            case .mtuChanged(let connection, let mtu) where isCentral(connection):
                output.mtu(connection, mtu)
            case .serverRead(let connection, let handle, let offset, let value):
                output.read(connection, handle: handle, offset: offset, value: value)
            case .serverRequestRefused(let connection, let request, let handle, let error):
                output.refused(connection, request: request, handle: handle, error: error)
            case .server(let serverEvent):
                output.server(serverEvent)
                if case .valueWritten(_, let handle, let value) = serverEvent { await relay(handle, value) }
            case .advertisingStarted:
                output.advertising(on: true)
            case .advertisingStopped:
                output.advertising(on: false)
            case .passkeyDisplay(let connection, let passkey):
                output.passkeyShown(connection, passkey)
            // The host's PairingAnswers (--passkey, --yes) answers these prompts; the lines say how.
            case .passkeyRequest(let connection):
                output.passkeyRequested(connection, answer: pairing.passkey)
            case .numericComparison(let connection, let value):
                output.comparison(connection, value, accepted: pairing.yes)
            case .encryptionChanged(let connection, let level, let keySize):
                output.encryptionChanged(connection, level: level, keySize: keySize)
            case .paired(let connection, let keys, let bonded, let method):
                output.paired(connection, keys: keys, bonded: bonded, method: method)
                if bonded { await saveBonds() }
            case .pairingFailed(let connection, let failure):
                output.pairingFailed(connection, failure)
            default:
                break
            }
        }
    }

    func isCentral(_ handle: UInt16) -> Bool { centrals.peers.withLock { $0[handle] != nil } }

    /// A central wrote a characteristic that notifies or indicates: its subscribers get the new value.
    func relay(_ handle: UInt16, _ value: [UInt8]) async {
        guard let characteristic = await host.database.characteristic(valueHandle: handle) else { return }
        if characteristic.properties.contains(.notify) {
            _ = await host.perform(.notify(valueHandle: handle, value: value, connection: nil))
        }
        if characteristic.properties.contains(.indicate) {
            // One indication per subscribed central; each completes on its confirmation, which
            // arrives through this loop: not waited for here. Centrals not subscribed refuse it.
            for connection in centrals.handles {
                let host = self.host
                Task { _ = await host.perform(.indicate(valueHandle: handle, value: value, connection: connection)) }
            }
        }
    }

    /// Every bond the engine holds (those loaded from the file and the new ones) back to the file.
    func saveBonds() async {
        guard keys.inUse else {
            output.note("the bond was not saved: \(keys.path) holds the bonds of another local address than --own-address")
            return
        }
        do {
            try KeyFile.save(await host.bonds, localAddress: await host.localAddress, to: keys.path)
            output.note("bonds saved to \(keys.path)")
        } catch {
            output.note("\(error)")
        }
    }
}
