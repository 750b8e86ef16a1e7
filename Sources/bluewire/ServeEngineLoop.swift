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
    /// Writes it off every link's path (nil when the file was left out).
    let writer: BondFileWriter?

    func run(_ events: AsyncStream<HostEngineEvent>) async {
        // The store's latest use saved: a link encrypted with a bond makes a later one (HostBond.lastUsed).
        var savedUse = await host.bonds.map(\.lastUsed).max() ?? 0
        // The EATT bearers open, by link and CID.
        var bearers: Set<UInt32> = []
        for await event in events {
            switch event {
            case .channelOpened(let channel) where channel.psm == .eatt && channel.isEnhanced:
                bearers.insert(UInt32(channel.connection) << 16 | UInt32(channel.cid))
                output.eattBearer(channel.connection, cid: channel.cid, mtu: min(channel.mtu, channel.peerMTU))
            case .channelClosed(let connection, let cid, _) where bearers.remove(UInt32(connection) << 16 | UInt32(cid)) != nil:
                output.eattBearer(connection, cid: cid, mtu: nil)
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
                // A bond used is now the last the store would evict: that order goes to the file too.
                let bonds = await host.bonds
                if let use = bonds.map(\.lastUsed).max(), use > savedUse {
                    savedUse = use
                    await saveBonds(bonds, announced: false)
                }
            case .paired(let connection, let keys, let bonded, let method):
                output.paired(connection, keys: keys, bonded: bonded, method: method)
                if bonded {
                    let bonds = await host.bonds
                    savedUse = max(savedUse, bonds.map(\.lastUsed).max() ?? 0)
                    await saveBonds(bonds, announced: true)
                }
            case .pairingFailed(let connection, let failure):
                output.pairingFailed(connection, failure)
            case .bondEvicted(let peer, let authenticated):
                output.note("bond store full: evicted the bond with \(KeyFile.addressText(peer)) "
                    + "(\(authenticated ? "authenticated" : "unauthenticated"), used longest ago)")
            case .bondNotStored(let peer, _):
                output.note("bond store full of bonds kept (authenticated): the bond with \(KeyFile.addressText(peer)) was not stored")
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

    /// Every bond the engine holds (those loaded from the file and the new ones) back to the file, by
    /// the writer's thread: this loop and the host go on at once. `announced`: a line says when it is
    /// written (`bonds saved to FILE`); a save that only keeps the use order says nothing unless it fails.
    func saveBonds(_ bonds: [HostBond], announced: Bool) async {
        guard let writer else {
            if announced {
                output.note("the bond was not saved: \(keys.path) holds the bonds of another local address than --own-address")
            }
            return
        }
        writer.save(bonds, localAddress: await host.localAddress, label: announced ? "announced" : nil)
    }

    /// The writer for `keys` (nil when the file was left out), reporting on `output`.
    static func writer(for keys: KeyFileIdentity, output: ServeOutput) -> BondFileWriter? {
        guard keys.inUse else { return nil }
        return BondFileWriter(path: keys.path, report: { outcome in
            switch outcome.result {
            case .success: if outcome.label != nil { output.note("bonds saved to \(keys.path)") }
            case .failure(let failure): output.note("cannot write bond file \(keys.path): \(failure.reason)")
            }
        })
    }
}
