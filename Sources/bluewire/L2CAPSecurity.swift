import ArgumentParser
import Bluewire
import Foundation

/// How `l2cap connect` and `l2cap listen` secure a link: the bond file (`--keys`, as `pair`, `gatt`
/// and `serve` take it) and `pair`'s pairing options. Standard input carries the channel's SDUs, so
/// passkeys and comparisons are answered from `--passkey` and `--yes` only, never read from it.
struct L2CAPSecurityOptions: ParsableArguments {
    /// `--keys FILE`: bonds there encrypt the link; a new bond is saved there.
    @OptionGroup var keyFile: KeyFileOptions

    /// --io, --mitm, --legacy, --sc-only, --no-bond, --passkey, --yes, as `pair` takes them.
    @OptionGroup(title: "Pairing") var pairing: PairingOptions

    /// Opens the bond file as the command's identity: without --own-address its local address is
    /// used again; the default file of another --own-address is left out, an explicit one refused.
    func identity(live: inout LiveOptions) -> KeyFileIdentity {
        let explicit = keyFile.keys != nil || keyFile.bonds != nil
        return KeyFileIdentity.open(keyFile, live: &live, conflict: explicit ? .refuse : .leaveOut)
    }

    /// The host's Security Manager, the file's bonds and the answers to pairing prompts: set before
    /// the start, so that no prompt and no peer's pairing is missed.
    func configure(_ host: EngineHost, bonds: [HostBond], peerRole: String) async {
        await host.configureSecurity(pairing.security)
        await host.addBonds(bonds)
        await host.setPairingDelegate(L2CAPPairingAnswers(passkey: pairing.passkey, acceptsComparison: pairing.yes, peerRole: peerRole))
    }
}

/// Pairing prompts answered from `--passkey` and `--yes` (stdin is the channel's): a passkey to
/// type on the peer is shown on stderr; a passkey request without `--passkey` or a comparison
/// without `--yes` is refused at once, saying which option answers it.
struct L2CAPPairingAnswers: PairingDelegate {
    let passkey: UInt32?
    let acceptsComparison: Bool
    let peerRole: String

    func displayPasskey(_ passkey: UInt32, connection: UInt16) async {
        note("passkey: \(PairOutput.passkeyText(passkey)) (type it on \(peerRole))")
    }

    func enterPasskey(connection: UInt16) async -> UInt32? {
        if passkey == nil { note("\(peerRole) shows a passkey: refused (give it with --passkey; stdin carries the channel)") }
        return passkey
    }

    func confirm(_ value: UInt32, connection: UInt16) async -> Bool {
        note("confirm \(peerRole) shows \(PairOutput.passkeyText(value)): " + (acceptsComparison ? "yes (--yes)" : "refused (--yes accepts)"))
        return acceptsComparison
    }
}

extension KeyFileIdentity {
    /// Whether the file holds a bond for the peer of `link`: under its address, or under the identity
    /// address its private address resolved to.
    func hasBond(for link: HostConnection) -> Bool {
        hasBond(with: link.peer) || link.identityAddress.map { identity in
            bonds.contains { $0.peerIdentityAddress?.value == identity.value }
        } == true
    }

    /// Saves the bond a pairing during the command made, if the file does not hold it yet (or says on
    /// stderr that it was not saved, the file being another identity's). A file that cannot be
    /// written ends the command.
    func saveNewBond(from host: EngineHost, peer: BluetoothAddress) async {
        guard let bond = await host.bonds.first(where: { $0.peer.value == peer.value }),
              !contents.bonds.contains(bond) else { return }
        guard inUse else {
            note("bluewire: note: the bond was not saved: \(path) holds the bonds of another local address than --own-address")
            return
        }
        do {
            try await save(from: host, peer: peer)
        } catch {
            fail("\(error)")
        }
    }
}

extension CreditBasedConnectionFailure {
    /// The peer refused the channel for the link's security (Core Vol 3 Part A §4.23: Insufficient
    /// Authentication 0x0005, Encryption Key Size Too Short 0x0007, Insufficient Encryption 0x0008):
    /// pairing may lift the refusal.
    var isForSecurity: Bool {
        guard case .refused(let result) = self else { return false }
        return result == .insufficientAuthentication || result == .encryptionKeySizeTooShort || result == .insufficientEncryption
    }
}
