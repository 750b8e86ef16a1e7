import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireL2CAP

/// Everything the engine keeps per link.
struct EngineLink: Sendable {
    var handle: UInt16
    var role: HostLinkRole
    var peer: BluetoothAddress
    /// The identity `peer` resolves to with a bond's IRK, if it is a resolvable private address.
    var identity: BluetoothAddress?
    /// Our address on this link as the peer sees it (a private one with privacy on): what SMP's f5, f6
    /// and c1 take as the local address (Core Vol 3 Part H §2.2).
    var localAddress: BluetoothAddress?
    var interval: UInt16
    /// ATT on the fixed channel 0x0004, both the client and the server side (Core Vol 3 Part F).
    var bearer: ATTBearer
    /// LE signaling on channel 0x0005 (Core Vol 3 Part A §4) and the credit based channels on the
    /// dynamic CIDs 0x0040–0x007F (§4.22–4.28, §10.1).
    var channels: LinkChannels
    /// GATT client operations, the head one in progress (one ATT request at a time, §3.3.2).
    var clientOperations: [ClientOperation] = []
    /// Value handles of the characteristics our client subscribed to on the ATT bearer (HostEngine+ClientPhases).
    var subscribedCharacteristics: [UInt16] = []
    /// The peer's server answered Read Multiple Variable Length with Request Not Supported: later
    /// `.readMultiple` requests read each value on its own from the start.
    var readMultipleVariableRefused = false
    /// Our Client Supported Features were written to the peer's server (HostEngine+ClientFeatures).
    var clientFeaturesWritten = false
    /// Disconnect requests waiting for Disconnection Complete.
    var disconnectRequests: [HostRequestID] = []
    /// `.updateConnection` requests the controller accepted (Command Status), waiting for LE Connection
    /// Update Complete.
    var connectionUpdateRequests: [HostRequestID] = []
    /// Indications sent for a request, waiting for the central's confirmation.
    var indicationRequests: [(ATTIndicationID, HostRequestID)] = []
    /// The peer address whose connection state machine this link moves (HostEngine+PeerStates): the
    /// address the application passed to `.connect`. Nil on links we did not ask for (peripheral role).
    var machinePeer: BluetoothAddress?
    #if !BLUEWIRE_NO_CENTRAL
    /// The state the application's open GATT phase (`.beginGATTPhase`) put the peer's machine in; nil
    /// when none is open (HostEngine+AppPhases).
    var applicationPhase: ConnectionState?
    #endif
    /// Pairing, encryption level and waiting security requests (Core Vol 3 Part H).
    var security = LinkSecurity()

    init(handle: UInt16, role: HostLinkRole, peer: BluetoothAddress, interval: UInt16, preferredMTU: UInt16) {
        self.handle = handle
        self.role = role
        self.peer = peer
        self.interval = interval
        // PDUs come out with room for the ACL and L2CAP headers in front (HostEngine.drainBearer).
        bearer = ATTBearer(preferredMTU: preferredMTU, headroom: L2CAPFragmenter.headroom)
        channels = LinkChannels(role: role)
    }

    var connection: HostConnection {
        HostConnection(handle: handle, peer: peer, role: role, interval: interval, identityAddress: identity)
    }
}

/// A central's connection attempt in progress.
/// A `.connect` waiting for the previous attempt's end (`HostEngine.deferredConnect`).
struct DeferredConnect: Hashable, Sendable {
    var id: HostRequestID
    var peer: BluetoothAddress
    var parameters: LEConnectionParameters
    /// The attempt's own deadline, counted from the request: a controller that never reports the
    /// cancelled attempt's end fails this one in time with `.connectionTimeout`.
    var deadline: MonotonicInstant
}

struct PendingConnection: Hashable, Sendable {
    /// The request to complete; nil once it completed (cancelled or timed out) while the controller
    /// may still report the connection.
    var requestID: HostRequestID?
    var peer: BluetoothAddress
    /// The address the application asked for (an identity or the address itself): its machine's key.
    var requested: BluetoothAddress
    var deadline: MonotonicInstant
    /// The controller accepted our LE Create Connection (Command Status, Core Vol 4 Part E §7.8.12):
    /// only a failed LE Connection Complete after that is this attempt's.
    var accepted = false
}
