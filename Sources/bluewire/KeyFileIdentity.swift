import Bluewire
import Foundation
import Synchronization

/// A bond file as the identity of a command that connects and may pair (`pair`, `gatt read|write|
/// subscribe`): its bonds go to the engine before connecting, its local address is used again (peers
/// find their keys by the address they bonded with, Core Vol 3 Part H §2.4.1), and a new bond is
/// written back to it.
struct KeyFileIdentity {
    /// What to do when `--own-address` is not the address the file's bonds were made with.
    enum Conflict {
        /// End the command (`pair`, and any command given `--keys` explicitly): the user asked for
        /// that file.
        case refuse
        /// Run without the file: no bonds loaded, none saved (the default file of a command that
        /// pairs only when a peer asks).
        case leaveOut
    }

    let path: String
    let contents: KeyFile.Contents
    /// False when `--own-address` belongs to another identity and the file was left out.
    let inUse: Bool

    /// Loads the file (a damaged one ends the command with status 1, naming it). Without
    /// `--own-address`, `live` takes the file's local address.
    static func open(_ options: KeyFileOptions, live: inout LiveOptions, conflict: Conflict) -> KeyFileIdentity {
        let path = options.path
        let contents: KeyFile.Contents
        do {
            contents = try KeyFile.load(path)
        } catch {
            fail("\(error)")
        }
        var inUse = true
        if let stored = contents.localAddress {
            if let own = live.address {
                if let parsed = BluetoothAddress(parsing: own), parsed.value != stored.value, !contents.bonds.isEmpty {
                    switch conflict {
                    case .refuse:
                        fail("bond file \(path) holds the bonds of local address \(KeyFile.addressText(stored)), "
                            + "not --own-address \(own): give another --keys file for another identity")
                    case .leaveOut:
                        inUse = false
                    }
                }
            } else {
                live.address = stored.hexString
            }
        }
        return KeyFileIdentity(path: path, contents: contents, inUse: inUse)
    }

    /// The bonds to hand the engine before connecting.
    var bonds: [HostBond] { inUse ? contents.bonds : [] }

    /// Whether the file holds a bond with `peer` (the link is then encrypted with it, not paired).
    func hasBond(with peer: BluetoothAddress) -> Bool {
        bonds.contains { $0.peer.value == peer.value }
    }

    /// Writes the engine's bond with `peer` to the file, replacing an older one with the same peer and
    /// keeping the other peers' bonds, with the host's local address. Nothing when the file is not in
    /// use or the engine holds no bond with `peer`.
    ///
    /// Through a `BondFileWriter`, as `serve` saves: the file is encoded and replaced atomically on the
    /// writer's thread (a symbolic link stays a link), never on the host's executor or the task that
    /// asked, so a large store does not hold the links (the command's others: an `l2cap listen` with
    /// several centrals) while it is written. Returns once the file is written; a file that could not
    /// be written is an error naming it.
    func save(from host: EngineHost, peer: BluetoothAddress) async throws(CLIError) {
        guard inUse else { return }
        let new = await host.bonds.filter { $0.peer.value == peer.value }
        guard !new.isEmpty else { return }
        let others = contents.bonds.filter { $0.peer.value != peer.value }
        let failure = Mutex<PrivateFile.Failure?>(nil)
        let writer = BondFileWriter(path: path, report: { outcome in
            if case .failure(let reason) = outcome.result { failure.withLock { $0 = reason } }
        })
        writer.save(others + new, localAddress: await host.localAddress)
        await writer.flush()
        if let reason = failure.withLock({ $0 }) {
            throw CLIError("cannot write bond file \(path): \(reason.reason)")
        }
    }
}
