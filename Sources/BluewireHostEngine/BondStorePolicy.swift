/// How many bonds the engine keeps, and which one it gives up for a new one
/// (`HostSecurityConfiguration.bondStore`).
///
/// Without a limit, a central that pairs Just Works from a new random address each time fills the
/// store (and the file an application saves it to) without end: one did 300 bonds in 55 s. The
/// limit bounds that; the policy decides who pays for it:
/// - An unauthenticated bond (Just Works, Core Vol 3 Part H §2.3.5.2) says nothing about who paired:
///   anyone in range can make one. These are evicted first, the one used longest ago first (used:
///   made, or a link encrypted with its key).
/// - An authenticated bond (Passkey Entry, Numeric Comparison, OOB) took a user's part. It is never
///   evicted for an unauthenticated one, and for an authenticated one only with
///   `evictsAuthenticated`. When only bonds the policy keeps fill the store, the new bond is not
///   stored (`HostEngineEvent.bondNotStored`): the pairing still secures its link, but a flood of
///   strangers cannot push out a bond a user made.
///
/// Bonds handed to the engine with `addBond` (an application restoring its store) are never dropped
/// by it; they count toward the limit when a later pairing needs room.
public struct BondStorePolicy: Hashable, Sendable {
    /// The most bonds kept (at least 1). 128 by default: what a device paired with every phone and
    /// laptop of a household or lab keeps, and a store that saves in a blink.
    public var limit: Int
    /// Whether a new authenticated bond may evict the authenticated bond used longest ago when no
    /// unauthenticated one is left to evict (off: authenticated bonds stay until removed).
    public var evictsAuthenticated: Bool

    public static let defaultLimit = 128

    public init(limit: Int = BondStorePolicy.defaultLimit, evictsAuthenticated: Bool = false) {
        self.limit = Swift.max(1, limit)
        self.evictsAuthenticated = evictsAuthenticated
    }
}
