import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireL2CAP
import BluewireSMP

/// A caller-chosen number naming one application request; its completion carries the same number.
public struct HostRequestID: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt32
    @inlinable public init(rawValue: UInt32) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt32) { self.rawValue = rawValue }
}

/// The role this host plays on a link (Core Vol 6 Part B §1.1): the central created it, the
/// peripheral was advertising.
public enum HostLinkRole: Hashable, Sendable { case central, peripheral }

/// A link as the engine reports it.
public struct HostConnection: Hashable, Sendable {
    public var handle: UInt16
    public var peer: BluetoothAddress
    public var role: HostLinkRole
    /// Connection interval in units of 1.25 ms (Core Vol 4 Part E §7.7.65.1).
    public var interval: UInt16
    /// The peer's identity address when `peer` is a resolvable private address that a bond's IRK
    /// resolves (Core Vol 3 Part C §10.8.2.3); nil otherwise.
    public var identityAddress: BluetoothAddress?

    public init(handle: UInt16, peer: BluetoothAddress, role: HostLinkRole, interval: UInt16, identityAddress: BluetoothAddress? = nil) {
        self.handle = handle
        self.peer = peer
        self.role = role
        self.interval = interval
        self.identityAddress = identityAddress
    }
}

/// One service as Discover All found it, with its included services, its characteristics and their
/// descriptors.
public struct DiscoveredService: Hashable, Sendable {
    public var service: GATTService
    public var characteristics: [DiscoveredCharacteristic]
    /// The service's include declarations (Core Vol 3 Part G §3.2, §4.5.1), in handle order.
    public var includes: [GATTIncludedService]

    public init(service: GATTService, characteristics: [DiscoveredCharacteristic], includes: [GATTIncludedService] = []) {
        self.service = service
        self.characteristics = characteristics
        self.includes = includes
    }
}

/// One characteristic with the descriptors found after its value (Core Vol 3 Part G §4.7.1).
public struct DiscoveredCharacteristic: Hashable, Sendable {
    public var characteristic: GATTCharacteristic
    public var descriptors: [GATTDescriptor]

    public init(characteristic: GATTCharacteristic, descriptors: [GATTDescriptor]) {
        self.characteristic = characteristic
        self.descriptors = descriptors
    }

    /// The Client Characteristic Configuration descriptor (0x2902), if the peer has one.
    public var clientConfigurationHandle: UInt16? {
        descriptors.first { $0.uuid == BluetoothUUID(0x2902) }?.handle
    }
}

/// Why a request failed.
public enum HostEngineError: Error, Hashable, Sendable {
    /// The host has not finished bring-up (or it failed).
    case notRunning
    /// `start` while already started or starting.
    case alreadyStarted
    /// Bring-up failed at one command.
    case bringUp(BringUpError)
    /// A controller command failed, timed out or was refused.
    case command(CommandError)
    /// A scan is already running.
    case scanAlreadyRunning
    /// Another connection attempt is in progress (the controller takes one at a time, §7.8.12).
    case connectionAttemptInProgress
    /// The controller reported the attempt failed with this status.
    case connectionFailed(HCIStatus)
    /// No connection came within the configured time.
    case connectionTimeout
    /// The application cancelled the attempt.
    case cancelled
    /// No link with this handle.
    case unknownConnection(UInt16)
    /// The link an `EngineConnection` was made for (to `peer`) has ended, and its handle names a
    /// later link now: a controller may give a freed handle to the next link (Core Vol 4 Part E
    /// §7.7.65.1). Nothing was done on the later link.
    case staleConnection(handle: UInt16, peer: BluetoothAddress)
    /// The link went down with this reason before the operation finished.
    case disconnected(HCIStatus)
    /// The ATT bearer refused or failed the operation (e.g. the 30 s transaction timeout, §3.3.3).
    case att(ATTBearerError)
    /// The GATT procedure failed (error response, malformed answer...).
    case gatt(GATTClientError)
    /// The GATT server refused (not a characteristic value, no notify property...).
    case server(GATTServerError)
    /// `.indicate`: an indication already waits for the central's confirmation and its queue behind
    /// it is full (`GATTServerConfiguration.maximumQueuedIndications`): the value was dropped.
    case indicationQueueFull
    /// `.indicate`: the value waited in the central's queue, and the central unsubscribed before its
    /// turn came: it was not sent.
    case unsubscribed
    /// The advertising or scan response data do not fit.
    case advertisingData(AdvertisingDataError)
    /// Advertising interval outside 0x0020...0x4000 (legacy) or min > max (§7.8.5).
    case invalidAdvertisingInterval
    /// Connectable extended advertising cannot also be scannable (§7.8.53).
    case scanResponseNotAllowed
    /// The credit based channel request cannot be carried out (unknown or closed channel, SDU
    /// above the peer's MTU, no free CID, invalid SPSM...).
    case channel(CreditBasedChannelError)
    /// The peer did not open the channel (refused, rejected, RTX timeout; Core Vol 3 Part A §4.23, §4.26).
    case channelRefused(CreditBasedConnectionFailure)
    /// The channel closed before the SDU went out.
    case channelClosed(CreditBasedDisconnectReason)
    /// The peer refused our Credit Based Reconfigure Request (nil: Command Reject or RTX timeout, §4.28).
    case channelReconfigurationRefused(CreditBasedReconfigureResult?)
    /// `.gattOnAnyEATTBearer` on a link with no Enhanced ATT bearer open (or the last one closed).
    case noEATTBearer(connection: UInt16)
    /// Pairing or encryption failed (Core Vol 3 Part H).
    case security(HostSecurityError)
    /// This build of the engine leaves the feature out (compiled with `BLUEWIRE_NO_SECURITY`,
    /// `BLUEWIRE_NO_CHANNELS` or `BLUEWIRE_NO_CENTRAL`, as the firmware images are).
    case notSupported
    /// A link parameter of `.setDataLength` or `.updateConnection` is outside the range the Core
    /// specification gives (Vol 4 Part E §7.8.33, §7.8.18); nothing was sent.
    case linkParameters(LinkParameterError)
    /// The peer's connection state machine (Docs/Design.md) refused the trigger this request needs in
    /// its current state: `.connect` to a connected peer or one in `Error`, `.reset` outside `Error`,
    /// a read or write before any discovery (Connected.Idle), anything but `.reset` in `Error`, a
    /// scan in `Error` until `.resetScan`. Nothing was sent and the state is unchanged.
    case refused(state: ConnectionState, trigger: ConnectionTrigger)
    /// The controller reported a Hardware Error (§7.7.16) with this code: the cause of the `Error`
    /// state it leaves every peer with something under way in.
    case hardwareError(UInt8)
    /// The transport to the controller ended (`HostEngine.transportEnded()`).
    case transportEnded
}

/// What a successful request returns.
public enum HostCompletion: Hashable, Sendable {
    /// The request is done and returns nothing.
    case done
    /// Bring-up finished: what the controller is. `indirect` (boxed): the largest payload by far and
    /// sent once, which every completion's copy switched over otherwise (about 2.6 KB of the
    /// firmware's flash).
    indirect case started(ControllerInfo)
    /// A connection attempt succeeded.
    case connected(HostConnection)
    /// A disconnect finished, with the reason the controller reported.
    case disconnected(HCIStatus)
    /// Discover All: every primary service with characteristics and descriptors.
    case services([DiscoveredService])
    /// A read: the value.
    case value([UInt8])
    /// A read of several values (`GATTClientRequest.readMultiple`): each whole, in the order asked.
    case values([[UInt8]])
    #if !BLUEWIRE_NO_GATT_CLIENT_EXTRAS
    /// `GATTClientRequest.discoverPrimaryServices`: the primary services found, in handle order.
    case primaryServices([GATTService])
    /// `GATTClientRequest.findIncludedServices`: the service's include declarations.
    case includedServices([GATTIncludedService])
    /// `GATTClientRequest.discoverCharacteristics`: the characteristics found, in handle order.
    case characteristics([GATTCharacteristic])
    /// `GATTClientRequest.discoverDescriptors`: the characteristic's descriptors.
    case descriptors([GATTDescriptor])
    /// `GATTClientRequest.readUsingCharacteristicUUID`: each value read, with its handle.
    case handleValues([GATTHandleValue])
    #endif
    /// An MTU exchange: the ATT_MTU now in use.
    case mtu(Int)
    /// A notification was sent to these connections.
    case notified([UInt16])
    /// A CCCD write: the descriptor handle written.
    case configured(descriptorHandle: UInt16)
    /// An LE Credit Based channel opened.
    case channelOpened(HostChannel)
    /// The Enhanced Credit Based channels that opened (the peer may refuse some, §4.26).
    case channelsOpened([HostChannel])
    /// Pairing or encryption finished: the link's security level now (Core Vol 3 Part C §10.2.1).
    case secured(LinkSecurityLevel)
    /// An ATT stream ended (`HostRequest.streamATT`): the values it handed to the link, and why.
    case streamed(sent: Int, end: ATTStreamEnd)
    /// LE Read PHY: the link's PHYs each way (1 = LE 1M, 2 = LE 2M, 3 = LE Coded; Core Vol 4 Part E §7.8.47).
    case phy(tx: UInt8, rx: UInt8)
    /// `.command`: the controller's answer with status 0x00, Command Complete with the command's return
    /// parameters (the status first) or Command Status (Core Vol 4 Part E §7.7.14, §7.7.15).
    case commandResponse(CommandResponse)
    /// `.updateConnection`: the link's connection parameters now (LE Connection Update Complete, Core Vol 4
    /// Part E §7.7.65.3).
    case connectionParameters(HostConnectionParameters)
    /// `GATTClientRequest.attRequest`: the server's answer, its response or an Error Response.
    case attResponse(ATTPDU)
}

/// Something that happened that no request asked for.
public enum HostEngineEvent: Hashable, Sendable {
    /// A scan found or updated a device. This case and `paired` are `indirect` (boxed): the largest
    /// payloads, which every copy of an event would otherwise switch over (about 0.8 KB of firmware).
    indirect case deviceFound(DiscoveredDevice)
    /// Scanning stopped.
    case scanStopped
    case advertisingStarted
    case advertisingStopped
    /// LE Advertising Set Terminated (Core Vol 4 Part E §7.7.65.18): the controller stopped advertising
    /// set `handle`. Status 0x00 when a connection was created (`connectionHandle` is that link),
    /// Advertising Timeout 0x3C when the set's duration ran out, Limit Reached 0x43 when its maximum
    /// number of extended advertising events was reached (Vol 1 Part F); `numCompletedEvents` is how
    /// many extended advertising events the controller reports the set completed (meaningful when
    /// LE Set Extended Advertising Enable gave a maximum, §7.8.56). Reported as it comes; the engine's
    /// own handling (`.advertisingStopped` after it when the set it enabled ended with an error) is
    /// unchanged.
    case advertisingSetTerminated(handle: UInt8, status: HCIStatus, connectionHandle: UInt16, numCompletedEvents: UInt8)
    /// A link came up (either role).
    case connected(HostConnection)
    /// A link went down with this reason (Core Vol 4 Part E §7.7.5).
    case disconnected(handle: UInt16, reason: HCIStatus)
    /// A notification or indication arrived from a peer's server (indications are confirmed already).
    case notification(connection: UInt16, attribute: UInt16, value: ArraySlice<UInt8>, isIndication: Bool)
    /// ATT_MTU changed on a link.
    case mtuChanged(connection: UInt16, mtu: Int)
    /// The local GATT server did something: a peer wrote, (un)subscribed, confirmed an indication.
    case server(GATTServerEvent)
    /// The link's parameters changed (§7.7.65.3).
    case connectionUpdated(handle: UInt16, interval: UInt16, latency: UInt16, timeout: UInt16)
    /// The controller reported a hardware error; every link and procedure has been failed.
    case hardwareError(UInt8)
    /// The controller broke a rule the engine relies on, and the engine went on without it: a
    /// host logs it (it names the controller's fault, not the application's).
    case controllerFault(ControllerFault)
    /// A peer's connection state machine moved (`HostEngine.state(of:)`); `cause` says what failed
    /// for a transition to `Error`, nil otherwise. Emitted only for peers known to the engine as central
    /// (connected to, reset or `.watch`ed), at connection-level moments, GATT procedure boundaries
    /// (the engine's and the application's `.beginGATTPhase` / `.endGATTPhase`) and scan moments: a
    /// known peer in Initial scans along, with one DeviceFound per scan report of it (HostEngine+WatchedPeers).
    case stateChanged(peer: BluetoothAddress, ConnectionTransition, cause: HostEngineError?)
    /// A trigger the engine fires by construction was refused all the same: the model and the link
    /// are out of step (a bug, reported rather than dropped).
    case stateRefused(peer: BluetoothAddress, HostEngineError)
    /// The scan's state machine moved (`HostEngine.scanState`): StartScan, StopScan, Failure (with its
    /// `cause`) when the controller refused the scan or failed while scanning, and Reset. DeviceFound,
    /// Scanning's self-transition, is fired but not emitted: `.deviceFound` is that event.
    case scanStateChanged(ConnectionTransition, cause: HostEngineError?)
    /// A credit based channel opened, ours or the peer's (Core Vol 3 Part A §4.22-4.26).
    case channelOpened(HostChannel)
    /// A complete SDU arrived on a channel (its credits are already on their way back).
    case channelSDU(connection: UInt16, cid: UInt16, sdu: [UInt8])
    /// A channel closed; `.violation` when the peer broke flow control and we closed it (§10.1).
    case channelClosed(connection: UInt16, cid: UInt16, reason: CreditBasedDisconnectReason)
    /// The peer granted credits (§4.24): `credits` K-frames may be sent now.
    case channelCredits(connection: UInt16, cid: UInt16, credits: Int)
    /// New MTU/MPS on enhanced channels (§4.27): ours (`byPeer` false) or the peer's (true).
    case channelsReconfigured(connection: UInt16, cids: [UInt16], mtu: Int, mps: Int, byPeer: Bool)
    /// Passkey Entry: show this six-digit passkey to the user (Core Vol 3 Part H §2.3.5.3).
    case passkeyDisplay(connection: UInt16, passkey: UInt32)
    /// Passkey Entry: ask the user for the passkey the peer shows; answer with `.passkeyReply`.
    case passkeyRequest(connection: UInt16)
    /// Passkey Entry: the peer's user pressed a key while entering the passkey (Keypress Notification,
    /// Core Vol 3 Part H §3.5.8), when both sides set the Keypress bit (`PairingConfiguration.keypressNotifications`).
    case keypress(connection: UInt16, type: KeypressNotificationType)
    /// Numeric Comparison: show the value and ask whether the peer shows the same (§2.3.5.6.2); answer
    /// with `.confirmReply`.
    case numericComparison(connection: UInt16, value: UInt32)
    /// The link's encryption changed (Core Vol 4 Part E §7.7.8, §7.7.39): its security level and key size.
    case encryptionChanged(connection: UInt16, level: LinkSecurityLevel, keySize: UInt8)
    /// A pairing finished: the keys distributed (§3.6), stored in the bond store when `bonded`, and the
    /// method the two devices' features selected (§2.3.5.1, tables 2.6-2.8).
    indirect case paired(connection: UInt16, keys: HostBond, bonded: Bool, method: PairingMethod)
    /// A pairing failed; its keys are discarded.
    case pairingFailed(connection: UInt16, PairingFailure)
    /// The bond store was full (`BondStorePolicy.limit`) and this bond, the one its policy puts first
    /// (unauthenticated before authenticated, used longest ago first), was removed to make room for a
    /// new one. Save the store again: the bond is gone from memory.
    case bondEvicted(peer: BluetoothAddress, authenticated: Bool)
    /// The bond store was full of bonds its policy keeps (authenticated ones, unless
    /// `BondStorePolicy.evictsAuthenticated`), so the bond a pairing just made with `peer` was not
    /// stored; the pairing secured its link all the same, and `.paired` says `bonded: false`.
    case bondNotStored(peer: BluetoothAddress, authenticated: Bool)
    /// A Signed Write Command was dropped (Core Vol 3 Part C §10.4.2): why.
    case signedWriteRefused(connection: UInt16, handle: UInt16, reason: SignedWriteRefusal)
    /// A peer's client read a value from the local GATT server (Read, Read Blob, Read Multiple, Read
    /// By Type of a non-declaration type; Core Vol 3 Part F §3.4.4). `offset` is Read Blob's; `value`
    /// is what the response carried for this attribute alone, nil for Read Multiple (not delimited).
    case serverRead(connection: UInt16, handle: UInt16, offset: Int, value: [UInt8]?)
    /// The local GATT server answered a peer's request with an Error Response (Part F §3.4.1.1):
    /// a permission the link does not meet (Insufficient Encryption 0x0F, Insufficient
    /// Authentication 0x05...), an invalid handle. Attribute Not Found, how discovery ends (Part G
    /// §4.4.1), is not reported.
    case serverRequestRefused(connection: UInt16, request: ATTOpcode, handle: UInt16, error: ATTErrorCode)
    /// LE PHY Update Complete (Core Vol 4 Part E §7.7.65.12) with success: the link's PHYs each way now
    /// (1 = LE 1M, 2 = LE 2M, 3 = LE Coded), after `.setPHY` or a change the peer asked for.
    case phyUpdated(connection: UInt16, tx: UInt8, rx: UInt8)
    /// LE Data Length Change (Core Vol 4 Part E §7.7.65.7): the largest link-layer payloads (octets,
    /// 27–251) and their air times (µs) each way now, after `.setDataLength`, the engine's own request
    /// once a link is up, or the peer's.
    case dataLengthChanged(connection: UInt16, maxTxOctets: UInt16, maxTxTime: UInt16, maxRxOctets: UInt16, maxRxTime: UInt16)
}

/// Why a Signed Write Command was not written.
public enum SignedWriteRefusal: Hashable, Sendable {
    /// No bond with this peer holds a CSRK it distributed.
    case noSigningKey
    /// The signature does not verify with the peer's CSRK.
    case badSignature
    /// The SignCounter is not larger than the last one accepted: a replay.
    case replayedCounter(UInt32)
}

/// What the caller drains from the engine, in order.
public enum HostEngineOutput: Hashable, Sendable {
    /// An HCI packet for the controller, to write in this order.
    case send(HCIPacket)
    /// A request finished.
    case completed(HostRequestID, Result<HostCompletion, HostEngineError>)
    /// Something happened.
    case event(HostEngineEvent)
}

/// Knobs the engine needs up front.
public struct HostEngineConfiguration: Hashable, Sendable {
    /// The static random address set in bring-up and used for advertising, scanning and connecting
    /// (Core Vol 6 Part B §1.3.2.1: the two top bits must be 1).
    public var randomAddress: BluetoothAddress
    /// How long a command may go unanswered (bumble's controller answers unknown commands never).
    public var commandTimeout: TimeSpan
    /// How long a connection attempt may take before it is cancelled.
    public var connectionTimeout: TimeSpan
    /// Our ATT Rx MTU, offered in exchanges and used by the server.
    public var preferredMTU: UInt16
    /// What our GATT client writes to a peer's Client Supported Features characteristic (Core Vol 3
    /// Part G §7.2) once a discovery finds it, so that the peer's server knows it may send Multiple
    /// Handle Value Notifications (Part G §4.10.2 forbids them to a client that has not said so) and
    /// that we use EATT. Empty: never written. The default is what this engine supports: Multiple
    /// Handle Value Notifications, and EATT where channels are built in.
    public var clientFeatures: GATTClientFeatures
    /// Load the bonds' IRKs into the controller's resolving list and let it resolve their resolvable
    /// private addresses (Core Vol 4 Part E §7.8.38–44), when it has one; off: the host alone resolves
    /// them with the bonds' IRKs (Core Vol 3 Part C §10.8.2.3), as with a controller without a list.
    public var controllerAddressResolution = true
    /// End bring-up by clearing what a previous program left on the controller (the commands of
    /// `HostRequest.clearControllerLeftovers`): `start` completes once they are answered. Unlike that
    /// request sent after `start` completes, this fixes their place on the wire: after LE Read Resolving
    /// List Size (when bonds are loaded) and before the resolving list is written, whatever the timing of
    /// the controller's answers. A replayed session sends the same commands in the same order.
    public var clearsControllerLeftoversAtStart = false

    /// What the engine's GATT client supports (`clientFeatures`' default). Not Robust Caching: the
    /// client does not track the server's Database Hash.
    public static var supportedClientFeatures: GATTClientFeatures {
        #if BLUEWIRE_NO_CHANNELS
        return [.multipleHandleValueNotifications]
        #else
        return [.eatt, .multipleHandleValueNotifications]
        #endif
    }

    public init(
        randomAddress: BluetoothAddress, commandTimeout: TimeSpan = .seconds(2),
        connectionTimeout: TimeSpan = .seconds(10), preferredMTU: UInt16 = 247,
        clientFeatures: GATTClientFeatures = HostEngineConfiguration.supportedClientFeatures
    ) {
        self.randomAddress = randomAddress
        self.commandTimeout = commandTimeout
        self.connectionTimeout = connectionTimeout
        self.preferredMTU = preferredMTU
        self.clientFeatures = clientFeatures
    }
}

/// A rule of the Core specification a controller broke, which the engine survived.
public enum ControllerFault: Hashable, Sendable, CustomStringConvertible {
    /// A connection attempt to `peer` was cancelled (by the application, or when it timed out) and
    /// the controller never reported its end: LE Create Connection Cancel obliges it to send an LE
    /// Connection Complete for the attempt (Core Vol 4 Part E §7.8.13). The engine stopped waiting
    /// after `HostEngine.cancelledAttemptEndWait`, so later connects go ahead.
    case cancelledConnectionAttemptNeverEnded(peer: BluetoothAddress)

    public var description: String {
        switch self {
        case .cancelledConnectionAttemptNeverEnded(let peer):
            "controller fault: the cancelled connection attempt to \(peer) never ended with LE Connection Complete "
                + "(Core Vol 4 Part E §7.8.13); no longer waiting for it"
        }
    }
}
