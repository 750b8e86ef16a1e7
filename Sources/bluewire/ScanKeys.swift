import Bluewire
import Foundation

/// The bonds `scan --keys` names resolvable private addresses with: a bonded peer that uses privacy
/// advertises from a new private address every few minutes, and only the IRK it gave when bonding
/// tells that it is the same device (Core Vol 3 Part C §10.8.2.3). The engine resolves them
/// (`HostEngine`'s identity of an advertiser, `HostBond.resolves`); this only reads the file.
///
/// Only the bonds' peer keys are used: the file is read, never written, and whichever local address
/// it was made with does not matter (the peer's IRK resolves its addresses for anyone holding it).
enum ScanKeys {
    /// The bonds in `options`' file with a peer IRK and identity address, the only ones that can name
    /// a private address. The default file when missing is no bonds; a `--keys` file named explicitly
    /// must exist (scan never creates one, so a missing one is a mistyped name); a damaged file ends
    /// the command, naming it.
    static func load(_ options: KeyFileOptions) throws(CLIError) -> [HostBond] {
        let path = options.path
        let explicit = options.keys != nil || options.bonds != nil
        if explicit && !FileManager.default.fileExists(atPath: path) {
            throw CLIError("cannot read bond file \(path): no such file")
        }
        return try KeyFile.load(path).bonds.filter { $0.peerKeys.identityResolvingKey != nil && $0.peerIdentityAddress != nil }
    }

    /// Hands `bonds` to the engine, which then names the private addresses they resolve in its
    /// `.deviceFound` events. Its Security Manager needs the crypto for that; nothing pairs, and the
    /// controller's resolving list stays untouched (`controllerAddressResolution` off when the host
    /// was made): a scan leaves the controller as it found it, and reports keep the address the
    /// peer advertised.
    static func give(_ bonds: [HostBond], to host: EngineHost) async {
        guard !bonds.isEmpty else { return }
        await host.configureSecurity(HostSecurityConfiguration(pairing: PairingConfiguration(ioCapability: .noInputNoOutput), crypto: SMPCrypto(SwiftCryptoSMP())))
        await host.addBonds(bonds)
    }
}
