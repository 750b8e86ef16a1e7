import BluewireCore
import BluewireSMP

// Left out of builds with BLUEWIRE_NO_SECURITY (the firmware images), which keep no bonds.
#if !BLUEWIRE_NO_SECURITY

/// The bond store's limit and eviction order (`BondStorePolicy`): every use of a bond (made, or a link
/// encrypted with its key) gives it the next number of the engine's use count, and room for a new
/// bond is made by evicting the unauthenticated bond with the smallest, then (when allowed) the
/// authenticated one with the smallest.
extension HostEngine {
    /// The store's policy: the configuration's, or the default one before security is configured.
    var bondStorePolicy: BondStorePolicy { security.configuration?.bondStore ?? BondStorePolicy() }

    mutating func nextBondUse() -> UInt64 {
        security.bondUses &+= 1
        return security.bondUses
    }

    /// A link was encrypted with the bond stored under `peer`: it moves to the end of the eviction order.
    mutating func bondUsed(_ peer: BluetoothAddress) {
        guard security.bonds[peer] != nil else { return }
        let use = nextBondUse()
        security.bonds[peer]?.lastUsed = use
    }

    /// Evicts bonds until `bond` fits under the limit, as the policy allows; false when it does not
    /// allow enough (nothing is evicted then). A bond replacing one with the same peer needs no room.
    mutating func makeRoom(for bond: HostBond) -> Bool {
        let policy = bondStorePolicy
        guard security.bonds[bond.peer] == nil else { return true }
        let excess = security.bonds.count + 1 - policy.limit
        guard excess > 0 else { return true }
        // An unauthenticated newcomer never displaces an authenticated bond, whatever the policy.
        let mayEvictAuthenticated = policy.evictsAuthenticated && bond.authenticated
        var candidates = security.bonds.values.filter { !$0.authenticated || mayEvictAuthenticated }
        guard candidates.count >= excess else { return false }
        // Unauthenticated first, then the use order; the address breaks ties (bonds from a file
        // written before uses were counted all have 0) so that eviction is the same on every run.
        candidates.sort { a, b in
            if a.authenticated != b.authenticated { return !a.authenticated }
            if a.lastUsed != b.lastUsed { return a.lastUsed < b.lastUsed }
            return a.peer < b.peer
        }
        for evicted in candidates.prefix(excess) {
            security.bonds[evicted.peer] = nil
            if let identity = evicted.peerKeys.identityAddress?.bluetoothAddress {
                _ = security.currentAddresses.removeValue(forKey: identity)
            }
            emit(.bondEvicted(peer: evicted.peer, authenticated: evicted.authenticated))
        }
        return true
    }
}

#endif  // !BLUEWIRE_NO_SECURITY
