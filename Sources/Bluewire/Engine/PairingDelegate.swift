import BluewireHostEngine

/// The user's part in pairing (Core Vol 3 Part H §2.3.5): what an application shows and asks while
/// the Security Manager runs Passkey Entry or Numeric Comparison. `EngineHost` calls it for every
/// pairing on its links — one the application started (`pair(_:)`), one a peer started (a central's
/// Pairing Request, a peripheral's Security Request) and one a GATT request raised on demand (Part C
/// §10.3.2) — and sends the answer to the engine. Just Works and OOB ask nothing.
///
/// The spec requires a real user for the authenticated methods: a delegate that answers without one
/// (a fixed passkey, comparisons always accepted) gives the link only the protection of Just Works,
/// whatever level the engine then reports. `PairingAnswers` does that for tests and scripts.
public protocol PairingDelegate: Sendable {
    /// Passkey Entry with this device displaying (§2.3.5.3): show `passkey` as six digits, leading
    /// zeros included, for the user to type on the peer.
    func displayPasskey(_ passkey: UInt32, connection: UInt16) async

    /// Passkey Entry with this device inputting: the six-digit passkey the peer shows (0...999,999),
    /// or nil to refuse, which fails the pairing with Passkey Entry Failed (§3.5.5).
    func enterPasskey(connection: UInt16) async -> UInt32?

    /// Numeric Comparison (§2.3.5.6.2): true when the user confirms that the peer shows `value` (six
    /// digits) too; false fails the pairing with Numeric Comparison Failed.
    func confirm(_ value: UInt32, connection: UInt16) async -> Bool
}

/// Fixed answers, for tests and scripts (`--passkey`, `--yes`): the passkey this device enters (nil
/// refuses), whether comparisons are accepted, and a callback for what is to be displayed.
public struct PairingAnswers: PairingDelegate {
    public var passkey: UInt32?
    public var acceptsComparison: Bool
    public var onDisplay: @Sendable (UInt32, UInt16) async -> Void

    public init(passkey: UInt32? = nil, acceptsComparison: Bool = false,
                onDisplay: @escaping @Sendable (_ passkey: UInt32, _ connection: UInt16) async -> Void = { _, _ in }) {
        self.passkey = passkey
        self.acceptsComparison = acceptsComparison
        self.onDisplay = onDisplay
    }

    public func displayPasskey(_ passkey: UInt32, connection: UInt16) async { await onDisplay(passkey, connection) }
    public func enterPasskey(connection: UInt16) async -> UInt32? { passkey }
    public func confirm(_ value: UInt32, connection: UInt16) async -> Bool { acceptsComparison }
}
