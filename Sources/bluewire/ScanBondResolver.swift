import Bluewire
import Foundation

/// The identity addresses `scan --keys` shows beside resolvable private addresses: a bonded peer that
/// uses privacy advertises from a new private address every few minutes, and only the IRK it gave
/// when bonding tells that it is the same device (Core Vol 3 Part C §10.8.2.3).
///
/// Only the bonds' peer keys are used: the file is read, never written, and whichever local address
/// it was made with does not matter (the peer's IRK resolves its addresses for anyone holding it).
struct ScanBondResolver {
    /// The bonds with a peer IRK and identity address: the only ones that can name a private address.
    let bonds: [HostBond]
    private let crypto = SMPCrypto(SwiftCryptoSMP())
    /// Each private address's answer, worked out once (a device reports many times a second).
    private var resolved: [BluetoothAddress: BluetoothAddress?] = [:]

    init(bonds: [HostBond]) {
        self.bonds = bonds.filter { $0.peerKeys.identityResolvingKey != nil && $0.peerIdentityAddress != nil }
    }

    /// Reads `options`' file: the default file when missing is no bonds; a `--keys` file named
    /// explicitly must exist (scan never creates one, so a missing one is a mistyped name); a damaged
    /// file ends the command, naming it.
    static func load(_ options: KeyFileOptions) throws(CLIError) -> ScanBondResolver {
        let path = options.path
        let explicit = options.keys != nil || options.bonds != nil
        if explicit && !FileManager.default.fileExists(atPath: path) {
            throw CLIError("cannot read bond file \(path): no such file")
        }
        return ScanBondResolver(bonds: try KeyFile.load(path).bonds)
    }

    /// The identity address of the bond whose IRK resolves `address`; nil for an address no bond
    /// resolves and for any address that is not resolvable private.
    mutating func identity(of address: BluetoothAddress) -> BluetoothAddress? {
        guard address.randomKind == .resolvablePrivate, !bonds.isEmpty else { return nil }
        if let known = resolved[address] { return known }
        let identity = bonds.first { $0.resolves(address, crypto: crypto) }?.peerIdentityAddress
        resolved[address] = identity
        return identity
    }

    /// `device` with the identity address its private address resolves to, when a bond resolves it
    /// and the controller did not already (an address the controller resolved arrives as an identity).
    mutating func named(_ device: DiscoveredDevice) -> DiscoveredDevice {
        guard device.identityAddress == nil, let identity = identity(of: device.address) else { return device }
        var named = device
        named.identityAddress = identity
        return named
    }
}
