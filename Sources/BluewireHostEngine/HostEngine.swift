import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireL2CAP

/// The whole Bluetooth LE host as a deterministic state machine: no I/O, no clock, no threads.
///
/// The caller feeds it what the controller sends (`receive`), the time (`advanceTime`) and
/// application requests (`perform`), and drains what it decided (`nextOutput`): HCI packets to
/// write to the controller in order, request completions and events. `nextDeadline` says when to
/// call `advanceTime` at the latest. Everything that decides lives here: bring-up, command credits
/// and timeouts (Core Vol 4 Part E §4.4), ACL credits per link (§4.1.1), L2CAP fragmentation and
/// reassembly (Vol 3 Part A §7.2), LE signaling, credit based channels (LE CoC and enhanced,
/// §4.22–4.28, §10.1; HostEngine+Channels) with Enhanced ATT bearers on them, the GATT server and
/// client, advertising, scanning and connection setup. Every multi-command procedure runs in the
/// order it was asked for, one command at a time, so a stop asked right after a start runs after
/// the start.
///
/// A firmware main loop drives it like this (UART carries H4: one type octet, then the packet):
///
/// ```swift
/// var engine = HostEngine(configuration: HostEngineConfiguration(randomAddress: address))
/// engine.perform(.start, id: HostRequestID(1), now: clock.now())
/// var database = GATTDatabaseBuilder()  // ... services ...
/// engine.setDatabase(try database.build())
/// while true {
///     while let packet = uart.readH4Packet() {            // framing: type octet + HCI header lengths
///         engine.receive(packet, now: clock.now())          // HCIPacket(type:payload:)
///     }
///     engine.advanceTime(to: clock.now())                   // MonotonicInstant(microseconds:)
///     while let output = engine.nextOutput() {
///         switch output {
///         case .send(let packet): uart.write(packet.type.rawValue); uart.write(packet.payload)
///         case .completed(HostRequestID(1), .success):
///             engine.perform(.startAdvertising(.named("Bluewire")), id: HostRequestID(2), now: clock.now())
///         case .completed, .event: break                    // react to writes, subscriptions...
///         }
///     }
///     sleepUntilInterruptOr(engine.nextDeadline)            // or poll every millisecond
/// }
/// ```
public struct HostEngine: Sendable {
    public let configuration: HostEngineConfiguration
    /// What the controller is, once bring-up finished.
    public internal(set) var controller: ControllerInfo?
    /// The latest time handed in.
    public internal(set) var now: MonotonicInstant = .zero
    /// The time `advanceTime` last checked every timer at (HostEngine.receive).
    var timersCheckedAt: MonotonicInstant?

    enum Phase: Hashable, Sendable { case off, starting, running, failed }
    var phase: Phase = .off

    // Commands and controller procedures (HostEngine+Procedures).
    var commandFlow: CommandFlow
    var bringUp: ControllerBringUp?
    var procedures: [ControllerProcedure] = []
    var activeCommand: CommandID?
    /// The application's own commands (`.command`) waiting for their answer (HostEngine+RawCommands).
    var rawCommands: [(command: CommandID, opcode: HCIOpcode, request: HostRequestID?)] = []

    // Data path (HostEngine+ACL).
    var aclCredits = ACLCreditManager(totalBuffers: 0)
    var fragmenter = L2CAPFragmenter(bufferSize: 27)
    var reassembler = L2CAPReassembler()
    var links: LinearMap<UInt16, EngineLink> = LinearMap()
    #if !BLUEWIRE_NO_STREAMS
    /// Sequence-numbered notifications and Write Commands sent as ACL buffers allow (HostEngine+ATTStreams).
    var attStreams: [ATTStreamState] = []
    #endif
    #if !BLUEWIRE_NO_CHANNELS
    /// SPSMs every link accepts credit based channels on (HostEngine+ChannelRequests).
    var channelServices: [SPSM: CreditBasedChannelManager.Service] = [:]
    /// The registered SPSMs whose channels return credits `.onConsumption`.
    var consumptionPacedServices: Set<SPSM> = []
    #endif

    // Roles.
    var server: GATTServer
    var scan: ScanState?
    /// The scan's connection state machine (HostEngine+ScanMachine): Initial, Scanning, Error.
    var scanMachine = PeerMachine()
    var advertising = AdvertisingState()
    var pendingConnection: PendingConnection?
    /// A `.connect` that came while a cancelled or timed-out attempt was still winding down (its LE
    /// Connection Complete not in yet): it starts once that attempt has ended (HostEngine+Connecting).
    var deferredConnect: DeferredConnect?
    /// The connection state machine of every peer connected to as central (HostEngine+PeerStates).
    var peerMachines: LinearMap<BluetoothAddress, PeerMachine> = LinearMap()

    // Security Manager and bonds (HostEngine+Security).
    var security = EngineSecurity()

    // Outputs, drained in order.
    var outputs: [HostEngineOutput] = []
    var outputHead = 0
    #if !BLUEWIRE_NO_CENTRAL
    /// Notifications that arrived while `outputs` was empty (HostEngine+NotificationLane).
    var notifications: [HostNotification] = []
    var notificationHead = 0
    #endif

    public init(configuration: HostEngineConfiguration) {
        self.configuration = configuration
        commandFlow = CommandFlow(defaultTimeout: configuration.commandTimeout)
        server = GATTServer(
            database: GATTDatabase(), configuration: GATTServerConfiguration(serverMTU: Int(configuration.preferredMTU)))
    }

    /// True once bring-up finished.
    public var isRunning: Bool { phase == .running }

    /// The bring-up command sent and not answered yet (nil outside bring-up): what a host names when
    /// the controller's stream fails during bring-up, so the error says which command went unanswered.
    public var bringUpCommandAwaitingAnswer: HCIOpcode? { bringUp?.current?.opcode }

    /// The handles of the links up now, in order.
    public var connectionHandles: [UInt16] { links.sortedKeys }

    /// A link as it is now (its interval after LE Connection Update Complete, §7.7.65.3); nil without it.
    public func connection(_ handle: UInt16) -> HostConnection? { links[handle]?.connection }

    /// The ATT_MTU on a link.
    public func mtu(connection: UInt16) -> Int? { links[connection]?.bearer.mtu }

    /// ACL packets of a link waiting for controller buffers (Core Vol 4 Part E §4.1.1): what a sender
    /// streaming notifications paces on, so the engine never holds more than it wants buffered.
    public func queuedACLPackets(connection: UInt16) -> Int { aclCredits.queuedCount(handle: connection) }

    /// True while advertising is enabled in the controller.
    public var isAdvertising: Bool { advertising.isEnabled }

    /// True while a scan is running (or starting).
    public var isScanning: Bool { scan != nil }

    // MARK: output

    /// The next output, or nil when there is nothing to do.
    public mutating func nextOutput() -> HostEngineOutput? {
        // The notification lane came first (HostEngine+NotificationLane).
        if let notification = nextNotification() {
            return .event(.notification(
                connection: notification.connection, attribute: notification.attribute,
                value: notification.value, isIndication: notification.isIndication))
        }
        // The placeholder has no payload: nothing to release when the buffer is cleared.
        return outputs.takeFront(at: &outputHead, leaving: .event(.scanStopped))
    }

    /// Every pending output (convenient in tests; firmware drains with `nextOutput`).
    public mutating func takeOutputs() -> [HostEngineOutput] {
        var taken: [HostEngineOutput] = []
        while let output = nextOutput() { taken.append(output) }
        return taken
    }

    mutating func emit(_ event: HostEngineEvent) { outputs.append(.event(event)) }

    mutating func complete(_ id: HostRequestID?, _ result: Result<HostCompletion, HostEngineError>) {
        guard let id else { return }
        outputs.append(.completed(id, result))
    }

    mutating func write(_ packet: HCIPacket) { outputs.append(.send(packet)) }

    // MARK: time

    /// The earliest time at which `advanceTime` has something to do: a command, ATT transaction or
    /// connection attempt or SMP pairing (Core Vol 3 Part H §3.4) timing out.
    public var nextDeadline: MonotonicInstant? {
        var earliest = commandFlow.nextDeadline
        func consider(_ deadline: MonotonicInstant?) {
            guard let deadline else { return }
            if let current = earliest, current <= deadline { return }
            earliest = deadline
        }
        consider(pendingConnection?.deadline)
        consider(deferredConnect?.deadline)
        // By index: `for link in links.values` would copy every link, with all it holds.
        for index in links.indices { consider(links.values[index].bearer.deadline) }
        consider(channelDeadline)
        consider(securityDeadline)
        consider(privacyDeadline)
        consider(scanDeadline)
        return earliest
    }

    /// Tells the engine the time; fires every timer due by `now`.
    public mutating func advanceTime(to now: MonotonicInstant) {
        if now > self.now { self.now = now }
        // Nothing is due (`nextDeadline` names every timer below): only the time moves. A stream of
        // notifications, each read at a new time, costs this one check per read.
        if nextDeadline.map({ $0 > self.now }) ?? true {
            timersCheckedAt = self.now
            return
        }
        for completion in commandFlow.handleTimeouts(now: self.now) { commandCompleted(completion) }
        if let pending = pendingConnection, pending.requestID != nil, pending.deadline <= self.now {
            connectionAttemptTimedOut()
        }
        #if !BLUEWIRE_NO_CENTRAL
        if let pending = pendingConnection, pending.requestID == nil, pending.deadline <= self.now {
            cancelledAttemptEndOverdue()
        }
        if deferredConnect != nil { deferredConnectTimedOut() }
        #endif
        // Found first, then acted on: a receive with no timer due allocates nothing here.
        while let handle = firstLinkDue() {
            links[handle]?.bearer.advanceTime(to: self.now)
            drainBearer(handle: handle)
        }
        advanceChannelTimers()
        fireSecurityTimers()
        firePrivacyRotation()
        fireScanDuration()
        pumpProcedures()
        timersCheckedAt = self.now
    }

    /// The lowest handle whose ATT transaction deadline has passed.
    func firstLinkDue() -> UInt16? {
        var due: UInt16?
        for index in links.indices {
            guard let deadline = links.values[index].bearer.deadline, deadline <= now, !links.values[index].bearer.isClosed else {
                continue
            }
            let handle = links.keys[index]
            if let current = due, current < handle { continue }
            due = handle
        }
        return due
    }

    // MARK: input

    /// A packet from the controller (an event or ACL data; others are ignored).
    ///
    /// Timers are checked when the time moved since they last were: every timer is armed for a
    /// time after the one it is armed at, so none falls due while the time stands still, and the
    /// packets of one transport read, handed in at one time, cost one check.
    public mutating func receive(_ packet: HCIPacket, now: MonotonicInstant) {
        if now > self.now || timersCheckedAt != self.now { advanceTime(to: now) }
        switch packet.type {
        case .event:
            guard let event = try? HCIEvent(decoding: packet.payload) else { return }
            handle(event)
        case .acl:
            // A notification on the fast path changed nothing the procedures wait for (a timer
            // that fired just now was followed by a pump in `advanceTime`).
            if !receiveACL(packet.payload) { return }
        default:
            break
        }
        pumpProcedures()
    }

    /// An application request; it finishes with one `.completed(id, ...)` output.
    public mutating func perform(_ request: HostRequest, id: HostRequestID, now: MonotonicInstant) {
        advanceTime(to: now)
        switch request {
        case .start: start(id)
        case .startScan(let parameters, let filter, let duration): startScan(id, parameters, filter, duration: duration)
        case .stopScan: stopScan(id)
        case .connect(let peer, let parameters, let timeout): connect(id, peer, parameters, timeout: timeout)
        case .cancelConnect: cancelConnect(id)
        case .disconnect(let handle, let reason): disconnect(id, handle, reason)
        case .startAdvertising(let advertisement): startAdvertising(id, advertisement)
        case .stopAdvertising: stopAdvertising(id)
        case .notify(let valueHandle, let value, let connection): notify(id, valueHandle, value, connection)
        case .notifyMultiple(let values, let connection): notifyMultiple(id, values, connection)
        case .indicate(let valueHandle, let value, let connection): indicate(id, valueHandle, value, connection)
        case .gatt(let connection, let operation): gattClient(id, connection, operation)
        case .cancelGATT(let connection, let request): cancelGATT(id, connection, request)
        case .registerServer(let spsm, let parameters, let security, let creditReturn, let maximumChannels):
            registerChannelServer(id, spsm, parameters, security, creditReturn, maximumChannels: maximumChannels)
        case .unregisterServer(let spsm): unregisterChannelServer(id, spsm)
        case .openChannel(let connection, let spsm, let parameters, let creditReturn):
            openChannel(id, connection, spsm, parameters, creditReturn)
        case .openEnhancedChannels(let connection, let spsm, let count, let parameters):
            openEnhancedChannels(id, connection, spsm, count, parameters)
        case .sendSDU(let connection, let cid, let sdu): sendSDU(id, connection, cid, sdu)
        case .closeChannel(let connection, let cid, let abortive): closeChannel(id, connection, cid, abortive: abortive)
        case .giveCredits(let connection, let cid, let credits): giveCredits(id, connection, cid, credits)
        case .consumedSDUs(let connection, let cid, let count): consumedSDUs(id, connection, cid, count)
        case .gattOnEATT(let connection, let cid, let operation): gattOnEATT(id, connection, cid, operation)
        case .gattOnAnyEATTBearer(let connection, let operation): gattOnAnyEATTBearer(id, connection, operation)
        case .reconfigureChannels(let connection, let cids, let mtu, let mps): reconfigureChannels(id, connection, cids, mtu, mps)
        case .pair(let connection): pair(id, connection)
        case .encrypt(let connection): encrypt(id, connection)
        case .passkeyReply(let connection, let passkey): passkeyReply(id, connection, passkey)
        case .confirmReply(let connection, let accepted): confirmReply(id, connection, accepted)
        case .keypress(let connection, let type): keypress(id, connection, type)
        case .clearControllerLeftovers: clearControllerLeftovers(id)
        case .command(let command, let timeout): rawCommand(id, command, timeout: timeout)
        case .reset(let peer): resetPeer(id, peer)
        case .resetScan: resetScan(id)
        #if !BLUEWIRE_NO_CENTRAL
        case .watch(let peer): watchPeer(id, peer)
        case .beginGATTPhase(let connection, let phase): beginApplicationPhase(id, connection, phase)
        case .endGATTPhase(let connection, let failure): endApplicationPhase(id, connection, failure: failure)
        #endif
        case .streamATT(let connection, let stream): streamATT(id, connection, stream)
        case .stopATTStream(let connection, let pdu): stopATTStream(id, connection, pdu)
        case .readPHY(let connection): readPHY(id, connection)
        case .setPHY(let connection, let tx, let rx): setPHY(id, connection, tx: tx, rx: rx)
        case .setDataLength(let connection, let txOctets, let txTime):
            setDataLength(id, connection, txOctets: txOctets, txTime: txTime)
        case .updateConnection(let connection, let parameters): updateConnection(id, connection, parameters)
        }
        pumpProcedures()
    }

    /// Serve `database` from now on (to links already up too), with the server's limits in
    /// `serverConfiguration` (by default: ATT_MTU up to the configured preferred MTU, the
    /// `GATTServerConfiguration` defaults for queued writes and indications).
    public mutating func setDatabase(_ database: GATTDatabase, configuration serverConfiguration: GATTServerConfiguration? = nil) {
        server = GATTServer(
            database: database,
            configuration: serverConfiguration ?? GATTServerConfiguration(serverMTU: Int(configuration.preferredMTU)))
        // By index: `for (handle, link) in links` would copy every link, with all it holds.
        for index in links.indices {
            let handle = links.keys[index]
            let mtu = links.values[index].bearer.mtu
            server.connect(handle)
            if mtu != ATTBearer.defaultMTU { server.setMTU(mtu, for: handle) }
        }
    }

    /// The database being served (values change as peers write).
    public var database: GATTDatabase { server.database }

    /// Changes a local attribute's value (what later reads return; notify separately).
    public mutating func setValue(_ value: [UInt8], for handle: UInt16) throws(GATTDatabaseError) {
        try server.database.setValue(value, for: handle)
    }

    /// What the peer's client wrote to our Client Supported Features (Core Vol 3 Part G §7.2), if the
    /// database has the GATT service (`GATTDatabaseBuilder.addGenericAttributeService`); empty until then.
    public func clientSupportedFeatures(connection: UInt16) -> [UInt8] {
        server.clientSupportedFeatures(for: connection)
    }

    /// Who is subscribed to a characteristic value now.
    public func subscription(connection: UInt16, valueHandle: UInt16) -> GATTSubscription {
        server.subscription(connection: connection, valueHandle: valueHandle)
    }
}
