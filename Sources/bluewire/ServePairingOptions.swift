import ArgumentParser
import Bluewire

/// `serve --db`'s pairing options: `pair`'s (IO capability, --mitm, --legacy, --sc-only, --no-bond)
/// with the user's part played by options, since nobody sits at a server: `--passkey N` is the passkey
/// it displays (Passkey Entry where it displays) or enters (where it types), `--yes` accepts Numeric
/// Comparison. Without them a passkey request and a comparison are refused.
struct ServePairingOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "Pairing IO capability: display-only, display-yes-no, keyboard-only, no-input-no-output or keyboard-display.",
        valueName: "capability"))
    var io: String = "keyboard-display"

    @Flag(name: .long, help: "Require man-in-the-middle protection when a central pairs (an authenticated key).")
    var mitm = false

    @Flag(name: .long, help: "Pair with legacy pairing only (no LE Secure Connections).")
    var legacy = false

    @Flag(name: .customLong("sc-only"), help: "Refuse pairing other than LE Secure Connections.")
    var secureConnectionsOnly = false

    @Flag(name: .customLong("no-bond"), help: "Do not bond (no keys distributed or kept).")
    var noBond = false

    @Option(name: .long, help: ArgumentHelp(
        "Passkey Entry: the passkey to display, or to enter when the central displays (0-999999).", valueName: "passkey"))
    var passkey: UInt32?

    @Flag(name: .long, help: "Accept Numeric Comparison without asking.")
    var yes = false

    @Option(name: .customLong("max-bonds"), help: ArgumentHelp(
        "Most bonds kept (default 128); beyond it the unauthenticated bond used longest ago is evicted.", valueName: "n"))
    var maxBonds: Int = BondStorePolicy.defaultLimit

    @Flag(name: .customLong("evict-authenticated"), help: "With --max-bonds: a new authenticated bond may evict the authenticated bond used longest ago when no unauthenticated one is left (default: authenticated bonds are kept, the new bond is not stored).")
    var evictAuthenticated = false

    /// The bond store's limit and policy (`BondStorePolicy`).
    var bondStore: BondStorePolicy { BondStorePolicy(limit: maxBonds, evictsAuthenticated: evictAuthenticated) }

    /// No pairing option given (what --throughput requires).
    var isDefault: Bool {
        io == "keyboard-display" && !mitm && !legacy && !secureConnectionsOnly && !noBond && passkey == nil && !yes
            && maxBonds == BondStorePolicy.defaultLimit && !evictAuthenticated
    }

    func validate() throws {
        guard maxBonds >= 1 else { throw ValidationError("invalid --max-bonds \(maxBonds): at least 1") }
        try PairingOptions.validate(io: io, passkey: passkey, legacy: legacy, secureConnectionsOnly: secureConnectionsOnly)
    }

    /// The Security Manager's configuration (Core Vol 3 Part H §3.5.1), as `pair` builds it, with
    /// --passkey as the displayed passkey.
    var configuration: PairingConfiguration {
        var configuration = PairingOptions.configuration(
            io: io, mitm: mitm, legacy: legacy, secureConnectionsOnly: secureConnectionsOnly, noBond: noBond)
        configuration.fixedPasskey = passkey
        return configuration
    }
}
