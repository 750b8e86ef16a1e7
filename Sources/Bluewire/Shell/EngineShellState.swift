import BluewireCore
import BluewireHostEngine

/// What an `EngineHost` tells the `BluetoothHost` that runs on it (EngineHost.shellTap).
enum EngineShellTap: Sendable {
    /// An engine event, in order with the completions around it (notifications excepted: they
    /// reach subscribers through the engine host's own streams).
    case event(HostEngineEvent)
    /// The engine host acted on everything the engine decided (the end of a drain): ACL queues may
    /// have shrunk (Number Of Completed Packets) or gone (a disconnection), so ACL queue waiters
    /// look again.
    case drained
    /// The engine host closed or its transport ended: nothing more will come.
    case finished
}

/// A link's ATT stream of one PDU (the engine runs at most one of each per link).
struct ShellATTStreamKey: Hashable {
    var connection: UInt16
    var pdu: ATTStream.PDU
}

/// What a `BluetoothHost` keeps itself: what the engine does not say again
/// in its events, and what the host must redo after a Hardware Error.
struct EngineShellState {
    /// Whether the engine host's tap is installed (at the first `start`).
    var tapInstalled = false
    /// Every link the engine reported connected, by handle: the engine's `.disconnected` names the
    /// handle only, `HostEvent.disconnected` the peer too, and `Connection.disconnection()` waits here.
    var links: [UInt16: ShellLink] = [:]
    /// The number the next link gets (`ShellLink.generation`, `Connection`'s).
    var nextLinkGeneration: UInt64 = 1
    /// The peer and number of each ended link, by handle, until a new link gets the handle: what a
    /// `Connection` made for an ended link (`connection(of: .disconnected)`) carries.
    var endedLinkGenerations: [UInt16: LinkIdentity] = [:]
    /// `transitions(of:)` observers, by peer, fed from the engine's `.stateChanged`.
    var peerObservers: [BluetoothAddress: [UInt64: AsyncStream<PeerTransition>.Continuation]] = [:]
    /// The peer `connect(to:)` is connecting to, while it waits.
    var connectingPeer: BluetoothAddress?
    /// The running scan.
    var scan: ShellScan?
    /// The `onTransition` of a scan the application stopped, until its machine leaves Scanning.
    var endedScanObserver: (@Sendable (ConnectionTransition) -> Void)?
    /// True from a Hardware Error until the controller is up again.
    var recovering = false
    /// The GATT client sessions this host made, weakly, so `diagnostics` counts those still alive.
    var gattSessions: [WeakGATTClientSession] = []
    /// The advertisement the application started and has not stopped: restarted after a Hardware Error.
    var advertising: ShellAdvertising?
    /// `indicate` calls waiting for each central (`serverState(for:)`).
    var pendingIndicationCalls: [UInt16: Int] = [:]
    /// The running ATT stream call (`streamSequencedNotifications`, a throughput run's Write
    /// Commands) of each link and PDU, by the token it took: a call cancelled after a newer one
    /// started does not stop the newer one's stream.
    var attStreams: [ShellATTStreamKey: UInt64] = [:]

    init() {}
}
