import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireL2CAP
import BluewireSMP

/// What an application asks the engine to do. Each request is handed in with a caller-chosen
/// `HostRequestID`, and finishes with exactly one `.completed` output carrying that ID.
public enum HostRequest: Hashable, Sendable {
    /// Bring the controller up (Reset ... LE Set Random Address; see `ControllerBringUp`).
    case start
    /// Start scanning; reports arrive as `.deviceFound` events. Completes once the controller scans.
    /// With a `duration`, the engine stops the scan itself that long after the request (the scan's
    /// machine takes ScanCompleted, not StopScan, and `.scanStopped` follows once the controller
    /// confirmed that it no longer scans); without one it runs until `.stopScan`.
    case startScan(ScanParameters, filter: AdvertisingFilter, duration: TimeSpan? = nil)
    /// Stop scanning. Runs after any start already requested, so the controller ends up not scanning.
    case stopScan
    /// Create a connection as central (§7.8.12 / §7.8.66). Completes with `.connected` or an error;
    /// `.connectionTimeout` when no connection completed within `timeout` (the configuration's
    /// `connectionTimeout` when nil), the attempt then cancelled.
    case connect(BluetoothAddress, LEConnectionParameters, timeout: TimeSpan? = nil)
    /// Cancel the connection attempt in progress (§7.8.13). The attempt completes with `.cancelled`.
    case cancelConnect
    /// Disconnect a link (§7.1.6). Completes with the reason once Disconnection Complete arrives.
    case disconnect(handle: UInt16, reason: HCIStatus)
    /// Configure and enable advertising (legacy or extended commands, as the controller supports).
    case startAdvertising(HostAdvertisement)
    /// Disable advertising; no readvertising after disconnections either.
    case stopAdvertising
    /// Notify `value` on a characteristic to every subscribed central (or only `connection`).
    case notify(valueHandle: UInt16, value: [UInt8], connection: UInt16?)
    /// Notify several values to one central at once: packed into Multiple Handle Value Notifications
    /// when its client declared them in Client Supported Features, else one notification each
    /// (`GATTServer.notifyMultiple`, Core Vol 3 Part G §4.10.2). Completes with `.notified`.
    case notifyMultiple([GATTHandleValue], connection: UInt16)
    /// Indicate `value` on one connection; completes when the central confirms (§3.4.7.2). One
    /// indication is outstanding per central: later ones wait in the server's bounded queue. Fails
    /// with `.server(.notSupportedByCharacteristic)` when the central is not subscribed to
    /// indications, `.indicationQueueFull` when its queue is full (the value is dropped),
    /// `.unsubscribed` when it unsubscribed while the value waited, `.disconnected` when the link ends.
    case indicate(valueHandle: UInt16, value: [UInt8], connection: UInt16)
    /// A GATT client operation on a link, queued behind the link's earlier ones (one ATT request at a time).
    case gatt(connection: UInt16, GATTClientRequest)
    /// Accept credit based channels to `spsm` on every link (Core Vol 3 Part A §4.22, §4.25) with
    /// these receive parameters, if the link meets `security`. SPSM 0x0027 makes every enhanced
    /// channel to it an EATT bearer served by the GATT server (Vol 3 Part G §5.3.2).
    /// `creditReturn` says when the credits of SDUs received on these channels go back to the peer.
    /// `maximumChannels` caps the channels to `spsm` open at once on a link: a request beyond it is
    /// refused (§4.23 "No resources available"; in an enhanced request only the channels beyond
    /// it, §4.26 "Some connections refused – insufficient resources available").
    case registerServer(
        spsm: SPSM, parameters: CreditBasedChannelParameters, security: L2CAPSecurityRequirement,
        creditReturn: HostChannelCreditReturn = .onDelivery, maximumChannels: Int? = nil)
    /// Stop accepting channels to `spsm` (open ones stay open).
    case unregisterServer(spsm: SPSM)
    /// Open an LE Credit Based channel (§4.22); completes with `.channelOpened`. `creditReturn` says
    /// when the credits of SDUs received on it go back to the peer.
    case openChannel(
        connection: UInt16, spsm: SPSM, parameters: CreditBasedChannelParameters,
        creditReturn: HostChannelCreditReturn = .onDelivery)
    /// Open 1–5 Enhanced Credit Based channels in one request (§4.25); completes with `.channelsOpened`.
    case openEnhancedChannels(connection: UInt16, spsm: SPSM, count: Int, parameters: CreditBasedChannelParameters)
    /// Send an SDU (at most the peer's MTU) on a channel; it waits for credits as needed (§10.1) and
    /// the request completes once its last K-frame is handed to the link.
    case sendSDU(connection: UInt16, cid: UInt16, [UInt8])
    /// Disconnect a channel (§4.6); completes once the peer answered or RTX passed. An orderly
    /// close (the default) is a socket's close: the SDUs already queued go out first, as the
    /// peer's credits allow, and the Disconnection Request only after their last K-frame; an
    /// `abortive` one drops them and disconnects at once.
    case closeChannel(connection: UInt16, cid: UInt16, abortive: Bool = false)
    /// Grant the peer more credits on a channel (LE Flow Control Credit Ind, §4.24).
    case giveCredits(connection: UInt16, cid: UInt16, credits: Int)
    /// The application consumed the oldest `count` SDUs delivered (`.channelSDU`) on a channel whose
    /// credits return `.onConsumption`: the K-frames they took are credited back to the peer (§10.1).
    case consumedSDUs(connection: UInt16, cid: UInt16, count: Int)
    /// Withdraws the application's GATT client operation `request` (a `.gatt` request on this link) if it
    /// has not started: it still waits in the link's queue behind another, nothing of it has been sent,
    /// and it completes with `.cancelled`. One that has started runs to its end: ATT cannot take a
    /// request back (the bearer waits for its answer, Core Vol 3 Part F §3.3.2), and a procedure cut
    /// short could leave the server half-way (a prepared-write queue, §3.4.6). Operations on EATT
    /// bearers are not withdrawn. Completes with `.done` either way; `.unknownConnection` without the link.
    case cancelGATT(connection: UInt16, request: HostRequestID)
    /// A GATT client operation on an Enhanced ATT bearer (an enhanced channel on SPSM 0x0027,
    /// Core Vol 3 Part G §5.3.2), queued behind that bearer's earlier ones; bearers run in parallel.
    case gattOnEATT(connection: UInt16, cid: UInt16, GATTClientRequest)
    /// A GATT client operation on whichever EATT bearer of the link is free: independent operations
    /// spread over the bearers, one ATT request outstanding per bearer (Core Vol 3 Part F §3.3.2,
    /// Part G §5.3.2); while every bearer is busy they wait in the link's queue, first come first
    /// served, and each goes to the first bearer that finishes. Fails with `.noEATTBearer` on a link
    /// without bearers.
    case gattOnAnyEATTBearer(connection: UInt16, GATTClientRequest)
    /// Raise our MTU/MPS on 1–5 open enhanced channels (Credit Based Reconfigure Request, Core Vol 3
    /// Part A §4.27); the MTU may not shrink, the MPS only when one channel is named.
    case reconfigureChannels(connection: UInt16, cids: [UInt16], mtu: Int, mps: Int)
    /// Pair on a link (Core Vol 3 Part H §2.3): as central send a Pairing Request, as peripheral a Security
    /// Request (§3.6.7). Needs `configureSecurity`. Completes with `.secured(level)` once the link is
    /// encrypted and the keys are distributed (the `.paired` event carries them).
    case pair(connection: UInt16)
    /// Central: encrypt the link with the bonded peer's key, without pairing (§2.4.4). Completes with
    /// `.secured(level)` on Encryption Change, or fails (`.security(.notBonded)`, `.encryptionFailed`).
    case encrypt(connection: UInt16)
    /// Answer a `.passkeyRequest` event with the passkey the other device shows, or nil to refuse.
    case passkeyReply(connection: UInt16, passkey: UInt32?)
    /// While the user enters the passkey of a `.passkeyRequest`: tell the peer a key was pressed (Keypress
    /// Notification, Core Vol 3 Part H §3.5.8). Sent only when both sides set the Keypress bit and the
    /// passkey is not given yet; otherwise nothing is sent. Completes with `.done` either way, or fails with
    /// `.security(.noPairingInProgress)`.
    case keypress(connection: UInt16, KeypressNotificationType)
    /// Answer a `.numericComparison` event: true when both devices show the same number.
    case confirmReply(connection: UInt16, accepted: Bool)
    /// Clears what a previous program may have left running on the controller: scanning,
    /// advertising and a pending LE Create Connection (each command's refusal is expected and
    /// ignored). Reset does this on a conforming controller (Core Vol 4 Part E §7.3.2); bumble's
    /// does not, so a program run after a killed or timed-out one would get Command Disallowed.
    case clearControllerLeftovers
    /// One HCI command the application built (any opcode, vendor ones in OGF 0x3F included), sent
    /// when the controller has a command credit (Num_HCI_Command_Packets, Core Vol 4 Part E §4.4),
    /// beside the engine's own controller procedures rather than behind them (an unanswered one holds
    /// up only itself). Completes with `.commandResponse`, the
    /// controller's Command Complete (§7.7.14, with its return parameters) or Command Status (§7.7.15).
    /// A non-zero status fails it with `.command(.failed(opcode, status))` (Unknown HCI Command 0x01
    /// for an opcode the controller does not know, Vol 1 Part F §1.3); no answer within `timeout` (nil:
    /// the configuration's `commandTimeout`, counted from when it is sent) fails it with
    /// `.command(.timeout(opcode))`, as some controllers ignore commands they do not know. Refused with
    /// `.notRunning` before bring-up. The engine does not track what the command changes in the
    /// controller (a Reset, advertising or scanning turned on or off behind its back).
    case command(HCICommand, timeout: TimeSpan? = nil)
    /// Leave `Error` for `Disconnected.Initial` on `peer`'s connection state machine (the design's
    /// Reset, Docs/Design.md): the only way out of `Error`. Fails with `.refused` in any other state.
    case reset(BluetoothAddress)
    /// Leave `Error` for `Disconnected.Initial` on the scan's state machine (`HostEngine.scanState`),
    /// after a scan that failed to start or was failed by the controller; `.startScan` is refused
    /// until then. Fails with `.refused` in any other state.
    case resetScan
    #if !BLUEWIRE_NO_CENTRAL
    /// Make `peer` known before connecting to it: it gets its connection state machine now (as a first
    /// `.connect` or `.reset` would make it), so `HostEngine.state(of:)` and `.stateChanged` follow it,
    /// and while it is in Disconnected.Initial it takes part in every scan: StartScan (at once if a scan
    /// runs), DeviceFound when the scan reports it, then the scan's StopScan, ScanCompleted or Failure
    /// (Docs/Design.md, HostEngine+WatchedPeers). Completes with `.done`; nothing changes for a peer
    /// known already. Central role only.
    case watch(BluetoothAddress)
    /// Put the link's peer machine in the phase of a GATT procedure the application runs itself with
    /// `.attRequest`s (discovery by UUID, included services, descriptors, read by UUID, reliable writes:
    /// Core Vol 3 Part G §4.4.2–§4.9.5, which the engine also runs itself as `GATTClientRequest`s, the
    /// machine's phases included): fires the phase's trigger and completes with `.done`, or fails
    /// with `.refused(state:trigger:)` where the table refuses it (a read before any discovery, or while
    /// another phase, the engine's or the application's, runs: one procedure at a time, as ATT has one
    /// request outstanding per bearer, Part F §3.3.2); nothing changes then. An engine procedure that
    /// reaches its turn while the phase is open is refused the same way (HostEngine+AppPhases).
    case beginGATTPhase(connection: UInt16, ApplicationGATTPhase)
    /// End the application's phase begun with `.beginGATTPhase` on this link: OperationCompleted when
    /// `failure` is nil (the server answered, even with an Error Response), else Failure with `failure`
    /// as the cause (the bearer cannot be used, Part F §3.3.3). Completes with `.done`, firing nothing
    /// when the link ended the phase first (a transaction timeout, a Hardware Error); fails with
    /// `.refused` when no phase of the application's is open on the link, `.unknownConnection` once the
    /// link is gone (its Disconnect ended the phase).
    case endGATTPhase(connection: UInt16, failure: HostEngineError?)
    #endif
    /// Send sequence-numbered notifications or Write Commands on a link as fast as the controller's
    /// ACL buffers take them (`ATTStream`), until the limit, `.stopATTStream`, the central's
    /// unsubscription or the link's end. Completes with `.streamed` once the stream has ended and the
    /// controller has taken every packet it queued (at once when the link went down). A new stream of
    /// the same PDU on the link replaces a running one (which ends `.replaced`). `HostEngine.attStreamSent`
    /// says how many values went so far.
    case streamATT(connection: UInt16, ATTStream)
    /// End the link's running stream of this PDU (`.stopped`); completes with `.done` at once, the
    /// stream's own request once its packets have left.
    case stopATTStream(connection: UInt16, ATTStream.PDU)
    /// LE Read PHY (Core Vol 4 Part E §7.8.47): completes with `.phy`, the PHYs in force on the link.
    case readPHY(connection: UInt16)
    /// LE Set PHY (§7.8.49) both ways as given: completes with `.done` once the controller accepted
    /// it (Command Status); the link layer's result comes later as a `.phyUpdated` event, or never
    /// when nothing changes (the peer's choice, Core Vol 6 Part B §5.1.10).
    case setPHY(connection: UInt16, tx: LEPHYSet, rx: LEPHYSet)
    /// LE Set Data Length (Core Vol 4 Part E §7.8.33): suggests the largest link-layer payload the
    /// controller sends on the link (`txOctets` 27–251) and its air time (`txTime` 328–17,040 µs).
    /// Completes with `.done` once the controller's Command Complete accepts it; the lengths the two link
    /// layers settle on come later as a `.dataLengthChanged` event (LE Data Length Change, §7.7.65.7), or
    /// never when nothing changes. Values out of range fail with `.linkParameters` and nothing is sent.
    case setDataLength(connection: UInt16, txOctets: UInt16, txTime: UInt16)
    /// LE Connection Update (§7.8.18): asks for new connection parameters on the link (as peripheral the
    /// controller runs the Connection Parameters Request procedure, Core Vol 6 Part B §5.1.7). Completes
    /// with `.connectionParameters` from the LE Connection Update Complete event for the link (§7.7.65.3),
    /// the values now in force, or fails with `.command(.failed(.leConnectionUpdate, status))` with the
    /// status it or the Command Status reports, `.disconnected(reason)` when the link goes first, or
    /// `.linkParameters` (nothing sent) when a value is outside the ranges §7.8.18 gives.
    case updateConnection(connection: UInt16, LEConnectionParameters)
}

/// GATT client operations (Core Vol 3 Part G §4).
public enum GATTClientRequest: Hashable, Sendable {
    /// Discover all primary services, their characteristics and descriptors (§4.4.1, §4.6.1, §4.7.1).
    /// On a link made as central, every request below goes through the peer's connection state machine
    /// (HostEngine+ClientPhases): reads, writes and subscriptions are refused with `.refused` before a
    /// discovery (or `.cachedDiscovery`), as the design's table says.
    case discoverAll
    /// Read Characteristic Value (§4.8.1).
    case read(handle: UInt16)
    /// Read Long Characteristic Values (§4.8.3).
    case readLong(handle: UInt16)
    /// Several values, each whole (`ReadMultipleValues`): Read Multiple Variable Length (§4.8.5) when
    /// there are two or more and the server has it, finished with Read Blob where the answer was cut
    /// at ATT_MTU; one Read (and Read Blobs) per value on a server that answers Request Not Supported,
    /// which the engine then remembers for the link. Completes with `.values`, in the order asked.
    case readMultiple(handles: [UInt16])
    /// Write Characteristic Value (§4.9.3); the value must fit one Write Request (ATT_MTU − 3).
    case write(handle: UInt16, value: [UInt8])
    /// Write Long Characteristic Values (§4.9.4): Prepare Write Requests of ATT_MTU − 5 octets each, then an
    /// Execute Write Request, so a value longer than one Write Request (up to 512 octets, Core Vol 3 Part F
    /// §3.2.9) is written whole or not at all; a refusal or a response that does not echo the part cancels
    /// the server's queue (Execute Write, cancel) before the request fails.
    case writeLong(handle: UInt16, value: [UInt8])
    #if !BLUEWIRE_NO_GATT_CLIENT_EXTRAS
    /// Write Long Characteristic Values (§4.9.4) from `offset` (a part of a long value): as `.writeLong`,
    /// the first Prepare Write Request at `offset`, `offset` + the value's length at most 512 octets.
    case writeLongAtOffset(handle: UInt16, value: [UInt8], offset: UInt16)
    /// Reliable Writes (§4.9.5): every value queued on the server with Prepare Write Requests (each
    /// split at ATT_MTU − 5 octets and its echo checked), then one Execute Write Request, so all are
    /// written or none; a refusal or a wrong echo cancels the server's queue (Execute Write, cancel)
    /// before the request fails. Completes with `.done`.
    case reliableWrite([GATTHandleValue])
    #endif
    /// Write Without Response (§4.9.1): completes as soon as the command is queued.
    case writeWithoutResponse(handle: UInt16, value: [UInt8])
    /// Signed Write Without Response (Core Vol 3 Part G §4.9.2): signed with this device's CSRK and its
    /// next SignCounter (the bond's), or sent as a plain Write Command on an encrypted link, as §4.9.2
    /// requires. Needs a bond whose pairing distributed this device's CSRK.
    case signedWrite(handle: UInt16, value: [UInt8])
    /// Write the CCCD to enable notifications (or indications) (§4.12.3).
    case subscribe(GATTCharacteristic, indications: Bool, descriptorHandle: UInt16?)
    /// Write 0x0000 to the CCCD (§4.12.3).
    case unsubscribe(GATTCharacteristic, descriptorHandle: UInt16?)
    #if !BLUEWIRE_NO_GATT_CLIENT_EXTRAS
    // The procedures below are left out of builds with BLUEWIRE_NO_GATT_CLIENT_EXTRAS (the firmware
    // images, whose applications discover the whole database in one `.discoverAll`). Each is one
    // request, its ATT requests sent by the engine, and moves the peer's state machine as the others do
    // (HostEngine+ClientPhases): discoveries of services fire DiscoverServices, discoveries inside a
    // service DiscoverCharacteristics, reads Read.

    /// Discover All Primary Services (§4.4.1) when `uuid` is nil, else Discover Primary Service by
    /// Service UUID (§4.4.2). Completes with `.primaryServices`. The peer's machine ends in
    /// Connected.Idle: reads by handle are accepted once characteristics are discovered.
    case discoverPrimaryServices(uuid: BluetoothUUID?)
    /// Find Included Services (§4.5.1) within the service's handle range: `.includedServices`.
    case findIncludedServices(GATTService)
    /// Discover All Characteristics of a Service (§4.6.1), or only those of type `uuid` (Discover
    /// Characteristics by UUID, §4.6.2): `.characteristics`.
    case discoverCharacteristics(GATTService, uuid: BluetoothUUID?)
    /// Discover All Characteristic Descriptors (§4.7.1) between the characteristic's value handle and
    /// its end handle: `.descriptors` (none, with nothing sent, when the range is empty).
    case discoverDescriptors(GATTCharacteristic)
    /// Read Using Characteristic UUID (§4.8.2): Read By Type Requests over the handle range until it
    /// is covered, each value with its handle: `.handleValues`.
    case readUsingCharacteristicUUID(BluetoothUUID, startingHandle: UInt16, endingHandle: UInt16)
    /// Read Multiple Variable Length Characteristic Values (§4.8.5) and nothing else: one Read Multiple
    /// Variable Length Request (a value the server cut at ATT_MTU stays cut); a server without it fails
    /// the request with its Error Response. Completes with `.values`. (`.readMultiple` falls back.)
    case readMultipleVariableLength(handles: [UInt16])
    /// Read Multiple Characteristic Values (§4.8.4): one Read Multiple Request, the values concatenated
    /// as the server sent them (only a client that knows each length can split them): `.value`.
    case readMultipleConcatenated(handles: [UInt16])
    #endif
    /// Exchange MTU (§4.3.1); completes with the ATT_MTU in use.
    case exchangeMTU
    /// The application already knows the server's handles without discovering them on this link: from
    /// an earlier discovery of a bonded peer whose database has not changed (Core Vol 3 Part G §2.5.2),
    /// or from a profile that fixes them. Nothing is sent; the peer's state machine moves as after a
    /// discovery (DiscoverCharacteristics, then OperationCompleted: Connected.DiscoveredCharacteristic),
    /// so that reads, writes and subscriptions by handle are accepted, which the machine refuses before
    /// any discovery (Docs/Design.md). Completes with `.done`, or fails with `.refused` where the table
    /// refuses DiscoverCharacteristics (while notifications are enabled, for one).
    case cachedDiscovery
    /// One ATT request PDU the application built (a GATT client of its own, such as `GATTClient`'s
    /// operation queue over `EngineConnection`), queued behind the link's other client operations: one
    /// request outstanding per bearer (Core Vol 3 Part F §3.3.2), and the 30 s transaction timeout
    /// (§3.3.3) applies. Completes with `.attResponse` carrying the server's answer, its response or an
    /// Error Response as a PDU (not turned into an error: the caller's procedure decides what it means).
    /// Refused with `.att(.notARequest(opcode))` when the opcode is not a request, and fails with
    /// `.att(.pduTooLong)` when the encoded PDU exceeds ATT_MTU once it is its turn; nothing is sent
    /// then. The engine neither checks nor moves the peer's connection state machine for it (the
    /// application's procedure owns its phases: `HostRequest.beginGATTPhase`), except that a transaction timeout fires Failure
    /// (the bearer is unusable) as for every request. On an EATT bearer it goes on that bearer.
    case attRequest(ATTPDU)
    /// One ATT command PDU the application built (Write Command, Signed Write Command, Core Vol 3 Part F
    /// §3.4.5.3, §3.4.5.4): sent at once, in the order given, not held back by an outstanding request
    /// (commands have no response). Completes with `.done` once handed to the link; refused with
    /// `.att(.notACommand(opcode))` or `.att(.pduTooLong)`. Not checked against the state machine.
    case attCommand(ATTPDU)
}

/// What to advertise (Core Vol 3 Part C §11, Vol 4 Part E §7.8.5-9, §7.8.53-56).
public struct HostAdvertisement: Hashable, Sendable {
    public enum CommandSet: Hashable, Sendable { case automatic, legacy, extended }

    public var data: [ADElement]
    public var scanResponse: [ADElement]
    public var isConnectable: Bool
    /// Advertising interval bounds in units of 0.625 ms.
    public var intervalMin: UInt32
    public var intervalMax: UInt32
    public var commandSet: CommandSet
    /// Keep advertising while a central is connected (else resume only once no central is left).
    public var advertisesWhileConnected: Bool
    /// How many centrals may be connected before connectable advertising pauses (it resumes when
    /// one leaves); nil for no limit but the controller's.
    public var maximumConnections: Int?
    /// With extended commands (`.automatic` on a controller that has them), send legacy PDUs
    /// (ADV_IND...) when data and scan response fit 31 octets each, so that scanners without
    /// extended scanning see the device too (Core Vol 4 Part E §7.8.53, event property bit 4).
    public var prefersLegacyPDUs: Bool

    public init(
        data: [ADElement], scanResponse: [ADElement] = [], isConnectable: Bool = true,
        intervalMin: UInt32 = 0x00A0, intervalMax: UInt32 = 0x00A0, commandSet: CommandSet = .automatic,
        advertisesWhileConnected: Bool = false, maximumConnections: Int? = nil, prefersLegacyPDUs: Bool = false
    ) {
        self.data = data
        self.scanResponse = scanResponse
        self.isConnectable = isConnectable
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.commandSet = commandSet
        self.advertisesWhileConnected = advertisesWhileConnected
        self.maximumConnections = maximumConnections
        self.prefersLegacyPDUs = prefersLegacyPDUs
    }

    /// Flags (LE General Discoverable, BR/EDR not supported), the complete local name and the
    /// service UUIDs: what a peripheral usually advertises.
    public static func named(_ name: String, services: [BluetoothUUID] = []) -> HostAdvertisement {
        var data: [ADElement] = [.flags([.leGeneralDiscoverableMode, .brEdrNotSupported])]
        if !services.isEmpty { data.append(.serviceUUIDs(services, complete: true)) }
        data.append(.completeLocalName(name))
        return HostAdvertisement(data: data)
    }
}
