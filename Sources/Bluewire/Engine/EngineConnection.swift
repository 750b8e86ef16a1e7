import BluewireCore
import BluewireHCI
import BluewireHostEngine

/// One link of an `EngineHost`, as an application holds it: the link's security (Core Vol 3 Part C
/// §10.2) and the calls that raise it — `pair()` and `encrypt()` — next to its GATT client and its
/// disconnection. A value: it names the link by handle, and every call goes through the host's engine,
/// so the operation queue, the connection's state machine and the Security Manager decide as for
/// `perform(_:)`. Calls on a link that has gone throw `.unknownConnection` (or `.disconnected` with the reason).
///
/// It names one link, not a handle: a controller may give the handle of a link that ended to a
/// later one (Core Vol 4 Part E §7.7.65.1), and a call made then is refused with `.staleConnection`
/// instead of acting on the later link. The host tells a later link by its peer and role, and, for
/// an `EngineConnection` from `EngineHost.connect(to:)` or `EngineHost.connection(_:)`, by the
/// number the host gave the link when it came up (a later link of the same peer).
public struct EngineConnection: Sendable {
    /// The host the link belongs to.
    public let host: EngineHost
    /// The link as the engine reported it when it came up (handle, peer, role, identity address).
    public let link: HostConnection
    /// The host's number for the link, when it was known as this value was made (nil from
    /// `init(host:link:)`, which then tells links apart by peer and role only).
    let generation: UInt64?

    /// The link `link` of `host`. Prefer `EngineHost.connection(_:)`, which also records which link
    /// of that peer it is.
    public init(host: EngineHost, link: HostConnection) {
        self.host = host
        self.link = link
        self.generation = nil
    }

    init(host: EngineHost, link: HostConnection, generation: UInt64) {
        self.host = host
        self.link = link
        self.generation = generation
    }

    /// The connection handle (Core Vol 4 Part E §5.3.1).
    public var handle: UInt16 { link.handle }

    /// The link's security level now (Core Vol 3 Part C §10.2.1): unencrypted, unauthenticated
    /// encryption, authenticated, or authenticated LE Secure Connections with a 16-octet key.
    /// `.unencrypted` once the link is gone.
    public var securityLevel: LinkSecurityLevel {
        get async { await host.security(of: self)?.level ?? .unencrypted }
    }

    /// The encryption key size in octets (7–16, Core Vol 3 Part H §2.3.4), 0 while unencrypted or
    /// once the link is gone.
    public var keySize: UInt8 {
        get async { await host.security(of: self)?.keySize ?? 0 }
    }

    /// How the last pairing on this link authenticated (Core Vol 3 Part H §2.3.5.1), nil when none ran
    /// (encrypted with a bond, or not paired).
    public var pairingMethod: PairingMethod? {
        get async { await host.pairingMethod(of: self) }
    }

    /// Pairs (Core Vol 3 Part H §2.3): as central with a Pairing Request, as peripheral with a Security
    /// Request (§3.6.7) that asks the central to start. Returns the level reached once the link is
    /// encrypted and the keys are distributed; the host's `PairingDelegate` answers passkeys and
    /// comparisons. Needs `EngineHost.configureSecurity` first.
    /// - Throws: `.security(.pairingFailed(reason))` with the SMP reason by name (the link stays at its
    ///   old level), `.disconnected(reason)`, `.unknownConnection(handle)`, or `.staleConnection` once a
    ///   later link has the handle.
    public func pair() async throws(HostEngineError) -> LinkSecurityLevel {
        try await host.pair(self)
    }

    /// Central: encrypts with the stored bond's key, without pairing (§2.4.4).
    /// - Throws: `.security(.notBonded)` with no bond for the peer; `.security(.encryptionFailed(status))` when the
    ///   peer lost its keys (PIN or Key Missing): pair again or not, the application decides.
    public func encrypt() async throws(HostEngineError) -> LinkSecurityLevel {
        try await host.encrypt(self)
    }

    /// A GATT client operation, queued behind the link's earlier ones (one ATT request at a time,
    /// Core Vol 3 Part F §3.3.2); raised security on the server's demand when security is configured.
    public func perform(_ request: GATTClientRequest) async throws(HostEngineError) -> HostCompletion {
        try await host.perform(.gatt(connection: link.handle, request), on: self).get()
    }

    /// Disconnects with Remote User Terminated Connection (Core Vol 4 Part E §7.1.6) and returns the
    /// reason the controller reported once Disconnection Complete arrived.
    /// - Throws: `.unknownConnection(handle)` once the link is gone, `.staleConnection` once a later
    ///   link has its handle (that link is left alone).
    public func disconnect() async throws(HostEngineError) -> HCIStatus {
        let completion = try await host.perform(.disconnect(handle: link.handle, reason: .remoteUserTerminatedConnection), on: self).get()
        if case .disconnected(let reason) = completion { return reason }
        return .remoteUserTerminatedConnection
    }
}

extension EngineHost {
    /// Brings the controller up (Reset, then what the host needs to know and set: Core Vol 4 Part E
    /// §7.3.2, §7.4, §7.8) and returns what it supports. The transport opens here.
    /// - Throws: `.bringUp` naming the command the controller refused, `.alreadyStarted`, `.notRunning`.
    @discardableResult
    public func start() async throws(HostEngineError) -> ControllerInfo {
        guard case .started(let controller) = try await perform(.start).get() else { throw .notRunning }
        return controller
    }

    /// Connects as central to `peer` (Core Vol 4 Part E §7.8.12) and returns the link. A bonded peer's
    /// identity address is connected to through its resolvable private address when the host resolves
    /// one.
    /// - Throws: `.connectionFailed(status)` for an attempt the controller failed, `.connectionTimeout`
    ///   when the peer never answered within `HostEngineConfiguration.connectionTimeout` (the attempt is
    ///   cancelled; `timeout` overrides it for this attempt), `.refused` when the peer's state machine is not where a connect may start.
    public func connect(
        to peer: BluetoothAddress, parameters: LEConnectionParameters = LEConnectionParameters(), timeout: TimeSpan? = nil
    ) async throws(HostEngineError) -> EngineConnection {
        let completion = try await perform(.connect(peer, parameters, timeout: timeout)).get()
        guard case .connected(let link) = completion else { throw .connectionFailed(.unspecifiedError) }
        return EngineConnection(host: self, link: link, generation: generation(of: link))
    }

    /// Resets `peer`'s state machine out of `Error` (after a failure, `failure(of:)` says which) so
    /// that it may connect again.
    /// - Throws: `.refused` when the machine is not in `Error`.
    public func reset(_ peer: BluetoothAddress) async throws(HostEngineError) {
        _ = try await perform(.reset(peer)).get()
    }

    /// The link a peripheral learned of from `.connected` in `events()`, as an `EngineConnection`
    /// that names that link only: once it is gone, its calls are refused, also when a later link has
    /// its handle (ask while the link is up, as its `.connected` arrives).
    public func connection(_ link: HostConnection) -> EngineConnection {
        EngineConnection(host: self, link: link, generation: generation(of: link))
    }
}

extension EngineConnection: Hashable {
    /// The same link of the same host: a later link with the same handle is another connection.
    public static func == (lhs: EngineConnection, rhs: EngineConnection) -> Bool {
        lhs.host === rhs.host && lhs.link == rhs.link && lhs.generation == rhs.generation
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(host))
        hasher.combine(link)
        hasher.combine(generation)
    }
}
