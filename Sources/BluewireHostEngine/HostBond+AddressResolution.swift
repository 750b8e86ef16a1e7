import BluewireCore
import BluewireSMP

#if !BLUEWIRE_NO_SECURITY

extension HostBond {
    /// The identity address the peer distributed (Identity Address Information, Core Vol 3 Part H
    /// §3.6.5), if it did: the address a bonded peer is known by whatever private address it uses.
    public var peerIdentityAddress: BluetoothAddress? { peerKeys.identityAddress?.bluetoothAddress }

    /// Whether the peer's IRK resolves `address`, a resolvable private address (Core Vol 3 Part C
    /// §10.8.2.3): the address's hash, its low 24 bits, equals ah(IRK, prand), prand being its high 24
    /// bits (Core Vol 6 Part B §1.3.2.2; ah in Vol 3 Part H §2.2.2). False for any other kind of
    /// address and for a bond without a 16-octet peer IRK. A bonded phone changes its private address
    /// every few minutes; this is how it is recognised.
    public func resolves(_ address: BluetoothAddress, crypto: SMPCrypto) -> Bool {
        guard address.randomKind == .resolvablePrivate,
              let irk = peerKeys.identityResolvingKey, irk.count == 16 else { return false }
        // Most significant octet first, as ah takes them; the bond keeps the IRK as SMP carried it.
        let prand = [UInt8(truncatingIfNeeded: address.value >> 40), UInt8(truncatingIfNeeded: address.value >> 32),
                     UInt8(truncatingIfNeeded: address.value >> 24)]
        let hash = [UInt8(truncatingIfNeeded: address.value >> 16), UInt8(truncatingIfNeeded: address.value >> 8),
                    UInt8(truncatingIfNeeded: address.value)]
        guard let computed = try? crypto.ah(irk.reversed(), prand) else { return false }
        return computed == hash
    }
}

#endif  // !BLUEWIRE_NO_SECURITY
