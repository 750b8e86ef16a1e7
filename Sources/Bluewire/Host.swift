import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import BluewireL2CAP
import BluewireTransport
import Logging
import Synchronization

/// A Bluetooth LE host: runs the sans-I/O host engine (HCI, L2CAP, ATT, GATT) over one
/// transport, on one serial executor shared with its `EngineHost`, with an async/await API.
///
/// ```swift
/// let host = BluetoothHost(transport: try await TransportSpec(parsing: "tcp:127.0.0.1:9001").open())
/// let controller = try await host.start()              // Reset, features, buffers, event masks, address
/// for try await device in host.scan() { print(device.address, device.name ?? "") }
/// ```
///
/// Every protocol decision is the engine's (`BluewireHostEngine`); this actor is its shell
/// (Sources/Bluewire/Shell/, Docs/Design.md "BluetoothHost over the engine"). Packets arrive from
/// the transport in order and are handled one at a time on the shared executor; packets to the
/// controller leave in the order the engine produced them. The Host is the only part of Bluewire
/// that reads a clock (`HostClock`) or does I/O (through the transport).
public actor BluetoothHost {
    /// The transport to the controller.
    public nonisolated let transport: any HCITransport
    /// The clock used for every timeout.
    public nonisolated let clock: any HostClock
    public nonisolated let configuration: HostConfiguration
    let log: HostLoggers

    /// What bring-up learnt about the controller; nil until `start()` finished.
    public internal(set) var controller: ControllerInfo?
    var phase: Phase = .idle
    /// Why pending commands were last cancelled (a hardware error, the transport ending): what a
    /// cancelled `send` reports.
    var commandCancellationCause: HostError?
    /// Links that ended, by handle, until a new connection reuses the handle (bounded by the handle
    /// space): a request that finds its link gone reports this reason.
    var endedLinks: [UInt16: HCIStatus] = [:]
    /// The state each ended link's machine was left in (Disconnected.Initial, or Error), by handle, as
    /// long as `endedLinks` keeps its reason: what `Connection.state` reports once the link is gone.
    var endedLinkStates: [UInt16: ConnectionState] = [:]
    /// Senders waiting for a link's ACL queue to drain (Throughput/BluetoothHost+ACLQueue.swift).
    var aclQueueWaiters: [ACLQueueWaiter] = []
    /// Tasks waiting in `waitForDiagnostics` (Shell/BluetoothHost+DiagnosticsWaiters.swift).
    var diagnosticsWaiters: [DiagnosticsWaiter] = []
    /// Whether `diagnosticsWaiters` holds anyone, readable off the host's executor: a GATT client
    /// session's release (its deinit) re-checks them only then.
    nonisolated let hasDiagnosticsWaiters = Atomic<Bool>(false)
    var eventObservers: [UInt64: AsyncStream<HostEvent>.Continuation] = [:]
    var nextObserverID: UInt64 = 1
    /// Peripheral events, dynamic writes (Peripheral/).
    var peripheral = PeripheralState()

    /// The engine host this host runs on (Shell/), and what the shell keeps of its own.
    let engineHost: EngineHost
    var shell = EngineShellState()
    /// Where the engine host's notifications go, read by its handler without the actor (Shell/).
    nonisolated let notificationRoutes = ShellNotificationRoutes()

    /// One serial executor for the host and its engine, so the host reaches the engine's state
    /// synchronously (`onSharedExecutor`, which unlike `assumeIsolated` allocates nothing per call)
    /// and a call between them does not change threads.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { engineHost.unownedExecutor }

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
        engineHost = EngineHost(transport: transport, configuration: HostEngineConfiguration(host: configuration), clock: clock)
        self.transport = transport
        self.clock = clock
        self.configuration = configuration
        self.log = HostLoggers(base: logger)
    }

    /// The current instant on the host's clock.
    var now: MonotonicInstant { clock.now }

    /// Starts the I/O tasks and brings the controller up (Reset, version, supported commands and
    /// features, LE buffer sizes, event masks, random static address), then clears what a previous
    /// program left running on it (scanning, advertising, a pending connection attempt) unless
    /// `HostConfiguration.clearsControllerLeftoversAtStart` is off.
    @discardableResult
    public func start() async throws(HostError) -> ControllerInfo {
        try await engineStart(engineHost)
    }

    /// Stops scanning, fails every pending operation, and closes the transport. The controller keeps
    /// the rest (advertising, links): `release(timeout:)` stops advertising and disconnects first.
    /// A process that ends without either (a signal) leaves its advertising running on the
    /// controller until the next host's `start()` clears it.
    public func close() async {
        await engineClose(engineHost)
    }
}
