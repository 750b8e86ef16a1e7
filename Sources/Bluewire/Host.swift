import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import BluewireL2CAP
import BluewireTransport
import Logging

/// A Bluetooth LE host: runs the sans-I/O stack (HCI, L2CAP, ATT, GATT) over one transport, on one
/// serial executor (this actor), with an async/await API.
///
/// ```swift
/// let host = BluetoothHost(transport: try await TransportSpec(parsing: "tcp:127.0.0.1:9000").open())
/// let controller = try await host.start()              // Reset, features, buffers, event masks, address
/// for try await device in host.scan() { print(device.address, device.name ?? "") }
/// ```
///
/// Packets arrive from the transport in order and are handled one at a time on this actor; packets
/// to the controller go through a single writer in the order the stack produced them. The Host is
/// the only part of Bluewire that reads a clock (`HostClock`) or does I/O (through the transport).
public actor BluetoothHost {
    /// The transport to the controller.
    public nonisolated let transport: any HCITransport
    /// The clock used for every timeout.
    public nonisolated let clock: any HostClock
    public nonisolated let configuration: HostConfiguration
    let log: HostLoggers

    // HCI command flow (Core Vol 4 Part E §4.4).
    var commandFlow: CommandFlow
    var commandWaiters: [CommandID: CheckedContinuation<Result<CommandResponse, CommandError>, Never>] = [:]
    /// What bring-up learnt about the controller; nil until `start()` finished.
    public internal(set) var controller: ControllerInfo?
    var phase: Phase = .idle
    /// Why the transport ended, if it failed (kept so `start()` can report it).
    var transportFailure: TransportError?
    /// Why pending commands were last cancelled (a hardware error, the transport ending): what a
    /// cancelled `send` reports.
    var commandCancellationCause: HostError?

    // I/O tasks.
    let outbound: AsyncStream<HCIPacket>.Continuation
    let outboundPackets: AsyncStream<HCIPacket>
    var writerTask: Task<Void, Never>?
    var readerTask: Task<Void, Never>?
    var timerTask: Task<Void, Never>?
    var scheduledDeadline: MonotonicInstant?
    /// The last controller procedure queued; the next one starts after it (Host+Procedures.swift).
    var procedureTail: Task<Void, Never>?

    // ACL and L2CAP.
    var reassembler = L2CAPReassembler()
    var fragmenter = L2CAPFragmenter(bufferSize: 27)
    var aclCredits = ACLCreditManager(totalBuffers: 1)
    var links: [UInt16: Link] = [:]
    /// Why each link that ended did, by handle, until a new connection reuses the handle (bounded by
    /// the handle space): a request that finds its link gone reports this reason.
    var endedLinks: [UInt16: HCIStatus] = [:]
    /// The state each ended link's machine was left in (Disconnected.Initial, or Error), by handle, as
    /// long as `endedLinks` keeps its reason: what `Connection.state` reports once the link is gone.
    var endedLinkStates: [UInt16: ConnectionState] = [:]
    /// Senders waiting for a link's ACL queue to drain (Throughput/BluetoothHost+ACLQueue.swift).
    var aclQueueWaiters: [ACLQueueWaiter] = []

    // Roles.
    var scanSession: ScanSession?
    var pendingConnection: PendingConnection?
    /// The connection state machine of every peer address the host connected to (Central/PeerState.swift).
    var peers: [BluetoothAddress: PeerRecord] = [:]
    /// The scan's state machine (Disconnected.Initial, Scanning, or Error after a failed scan until
    /// `resetScan()`); its observer is the running scan's `onTransition`.
    var scanMachine = ConnectionStateMachine()
    var eventObservers: [UInt64: AsyncStream<HostEvent>.Continuation] = [:]
    var nextObserverID: UInt64 = 1
    /// The local GATT server (sans-I/O), answering every peer client's requests. Empty until the
    /// application gives it a database (`setDatabase`).
    var gattServer = GATTServer(database: GATTDatabase())
    /// Advertising, peripheral events and indication waiters (Peripheral/).
    var peripheral = PeripheralState()
    /// Weak references to per-connection objects, counted by `diagnostics`.
    let lifetimes = HostObjectLifetimes()

    // The engine backend (Shell/): the EngineHost this host runs on, nil on the legacy backend,
    // and what the shell keeps of its own.
    let engineHost: EngineHost?
    var shell = EngineShellState()
    /// Where the engine host's notifications go, read by its handler without the actor (Shell/).
    nonisolated let notificationRoutes = ShellNotificationRoutes()
    /// The actor whose executor this host runs on: the engine's, or an empty anchor (HostBackend.swift).
    let executorAnchor: any Actor

    /// One serial executor for the host and its engine, so the host reaches the engine's state
    /// synchronously (`assumeIsolated`) and a call between them does not change threads.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executorAnchor.unownedExecutor }

    enum Phase: Equatable {
        case idle, starting, running, closed
    }

    /// Creates a host on `transport`. Nothing is sent until `start()`.
    public init(
        transport: any HCITransport,
        configuration: HostConfiguration = HostConfiguration(),
        clock: any HostClock = SystemHostClock(),
        logger: Logger = Logger(label: "bluewire")
    ) {
        self.init(transport: transport, configuration: configuration, clock: clock, logger: logger, backend: .processDefault)
    }

    /// Creates a host on `transport` running on `backend` (HostBackend.swift). Nothing is sent until `start()`.
    @_spi(Testing) public init(
        transport: any HCITransport,
        configuration: HostConfiguration = HostConfiguration(),
        clock: any HostClock = SystemHostClock(),
        logger: Logger = Logger(label: "bluewire"),
        backend: HostBackend
    ) {
        switch backend {
        case .legacy:
            engineHost = nil
            executorAnchor = HostExecutorAnchor()
        case .engine:
            let engineHost = EngineHost(transport: transport, configuration: HostEngineConfiguration(host: configuration), clock: clock)
            self.engineHost = engineHost
            executorAnchor = engineHost
        }
        self.transport = transport
        self.clock = clock
        self.configuration = configuration
        self.log = HostLoggers(base: logger)
        self.commandFlow = CommandFlow(defaultTimeout: configuration.commandTimeout)
        (outboundPackets, outbound) = AsyncStream<HCIPacket>.makeStream(bufferingPolicy: .unbounded)
    }

    /// The current instant on the host's clock.
    var now: MonotonicInstant { clock.now }

    /// Starts the I/O tasks and brings the controller up (Reset, version, supported commands and
    /// features, LE buffer sizes, event masks, random static address).
    @discardableResult
    public func start() async throws(HostError) -> ControllerInfo {
        if let engineHost { return try await engineStart(engineHost) }
        guard phase == .idle else {
            if let controller { return controller }
            throw .notRunning
        }
        phase = .starting
        startIO()
        let address = configuration.randomAddress ?? BluetoothAddress.randomStatic(UInt64.random(in: 0...0x3FFF_FFFF_FFFF))
        switch await runBringUp(address: address) {
        case .success(let info):
            phase = .running
            return info
        case .failure(let error):
            log.hci.error("bring-up failed: \(error)")
            // A transport that failed mid bring-up (framing error, hang-up) cancelled the command:
            // its error is the one that says what happened.
            if phase == .closed, let transportFailure { throw .transport(transportFailure) }
            phase = .idle
            throw .bringUp(error)
        }
    }

    /// Runs the bring-up sequence (Core Vol 4 Part E §4: Reset first, then what the host must learn
    /// and configure) and adopts the controller's buffer sizes.
    func runBringUp(address: BluetoothAddress) async -> Result<ControllerInfo, BringUpError> {
        var bringUp = ControllerBringUp(randomAddress: address)
        var step = bringUp.start()
        while true {
            switch step {
            case .send(let command):
                step = bringUp.handle(await sendCommandResult(command))
            case .finished(let info):
                controller = info
                fragmenter = L2CAPFragmenter(bufferSize: Int(info.leACLDataPacketLength))
                aclCredits.reset(totalBuffers: Int(info.totalNumLEACLDataPackets))
                log.hci.debug("controller up", metadata: [
                    "address": "\(info.randomAddress)", "acl": "\(info.leACLDataPacketLength)x\(info.totalNumLEACLDataPackets)",
                    "extended-advertising": "\(info.supportsExtendedAdvertising)",
                ])
                return .success(info)
            case .failed(let error):
                return .failure(error)
            }
        }
    }

    /// Stops scanning, fails every pending operation, and closes the transport.
    public func close() async {
        if let engineHost { return await engineClose(engineHost) }
        guard phase != .closed else { return }
        phase = .closed
        shutDown(reason: .notRunning, failure: nil)
        await transport.close()
        readerTask?.cancel()
    }

    func startIO() {
        let transport = self.transport
        let packets = outboundPackets
        writerTask = Task { [weak self] in
            for await packet in packets {
                do throws(TransportError) {
                    try await transport.send(packet)
                } catch {
                    await self?.transportFailed(error)
                    return
                }
            }
        }
        readerTask = Task { await self.runInbound() }
    }

    func runInbound() async {
        var iterator = transport.inbound.makeAsyncIterator()
        do throws(TransportError) {
            while let packet = try await iterator.next(isolation: self) {
                receive(packet)
                // The rest of a burst without an await per packet.
                while let more = iterator.nextBuffered() { receive(more) }
            }
            if phase != .closed { transportFailed(.closed) }
        } catch {
            transportFailed(error)
        }
    }

    /// Queues a packet for the controller. Order is the order of calls.
    func write(_ packet: HCIPacket) {
        log.hci.trace("> \(packet.type) \(hexString(packet.payload))")
        outbound.yield(packet)
    }

    func transportFailed(_ error: TransportError) {
        guard phase != .closed else { return }
        // A stream that ends (a replay played out, a controller process that exits) is how a
        // session may end: callers get the error; the log says it at notice level. Anything else
        // (framing, a failed system call) is an error.
        if error == .closed { log.transport.notice("transport ended") } else { log.transport.error("transport ended: \(error)") }
        transportFailure = error
        phase = .closed
        shutDown(reason: .transport(error), failure: .host(.transport(error)))
    }

    /// Fails everything that waits on the controller. `failure` is nil when the application closed
    /// the host (the scan stops, links end with Disconnect), and the cause when the transport ended:
    /// then every connection state machine with something under way goes to Error with it.
    func shutDown(reason: HostError, failure: ConnectionFailureCause?) {
        commandCancellationCause = reason
        for completion in commandFlow.cancelAll() {
            commandWaiters.removeValue(forKey: completion.id)?.resume(returning: completion.result)
        }
        for waiter in commandWaiters.values { waiter.resume(returning: .failure(.cancelled(.reset))) }
        commandWaiters.removeAll()
        endScan(error: reason, trigger: failure == nil ? .stopScan : .failure)
        failPendingConnection(reason)
        if let failure {
            failLinks(cause: failure, reason: .connectionTerminatedByLocalHost)
        } else {
            for handle in Array(links.keys) { linkDisconnected(handle: handle, reason: .connectionTerminatedByLocalHost) }
        }
        for record in peers.values { record.finishObservers() }
        finishPeripheral()
        for observer in eventObservers.values { observer.finish() }
        eventObservers.removeAll()
        timerTask?.cancel()
        timerTask = nil
        outbound.finish()
    }
}
