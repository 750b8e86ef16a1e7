@_spi(Testing) import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireTesting
import BluewireTransport
import HostTestSupport
import Synchronization
import Testing

/// Two Bluewire hosts, central and peripheral, on a `VirtualLink` with immediate timing and a
/// `TestClock`: everything a procedure does happens at one instant of virtual time, and time moves
/// only when a test advances it (to reach a supervision timeout, a command timeout...).
struct FaultBench {
    static let centralAddress = BluetoothAddress.randomStatic(0x0000_0000_FA01)
    static let peripheralAddress = BluetoothAddress.randomStatic(0x0000_0000_FB02)
    /// 20 × 10 ms: a lost link is declared after 200 ms of virtual time (Core Vol 6 Part B §4.5.2).
    static let supervisionTimeout = TimeSpan.milliseconds(200)
    static let connectionParameters = LEConnectionParameters(supervisionTimeout: 0x0014)

    let clock: TestClock
    let link: VirtualLink
    let centralController: VirtualController
    let peripheralController: VirtualController
    let central: BluetoothHost
    let peripheral: BluetoothHost
    let centralTransport: ObservedVirtualTransport
    let peripheralTransport: ObservedVirtualTransport
    let fixture: FaultDatabase
    /// Poked by both transports, both hosts and the tests' flags: what `settleQuiet` wakes on.
    let signal: BenchSignal

    static func make(
        commandTimeout: TimeSpan = .seconds(2), centralMTU: UInt16 = 517
    ) async throws -> FaultBench {
        let clock = TestClock()
        let link = VirtualLink(clock: clock, timing: .immediate)
        let centralController = link.addController(publicAddress: VirtualAddress.centralPublic)
        let peripheralController = link.addController(publicAddress: VirtualAddress.peripheralPublic)
        let signal = BenchSignal()
        let centralTransport = ObservedVirtualTransport(controller: centralController, signal: signal)
        let peripheralTransport = ObservedVirtualTransport(controller: peripheralController, signal: signal)
        let central = BluetoothHost(
            transport: centralTransport,
            configuration: HostConfiguration(
                randomAddress: centralAddress, commandTimeout: commandTimeout, preferredMTU: centralMTU),
            clock: clock, logger: .provokedFailure)
        let peripheral = BluetoothHost(
            transport: peripheralTransport,
            configuration: HostConfiguration(randomAddress: peripheralAddress, commandTimeout: commandTimeout),
            clock: clock, logger: .provokedFailure)
        signal.watchDiagnostics(of: central)
        signal.watchDiagnostics(of: peripheral)
        clock.onSleepersChanged { signal.poke() }
        try await central.start()
        try await peripheral.start()
        let fixture = try FaultDatabase()
        await peripheral.setDatabase(fixture.database)
        _ = try await peripheral.startAdvertising(try Advertisement(name: "Faults", services: [FaultDatabase.service]))
        return FaultBench(
            clock: clock, link: link, centralController: centralController, peripheralController: peripheralController,
            central: central, peripheral: peripheral, centralTransport: centralTransport,
            peripheralTransport: peripheralTransport, fixture: fixture, signal: signal)
    }

    /// Connects the central to the peripheral once the peripheral advertises again (it resumes after
    /// each disconnection, on its own task).
    func connect() async throws -> Connection {
        try await peripheral.until("the peripheral advertises") { $0.advertising }
        return try await central.connect(to: Self.peripheralAddress, parameters: Self.connectionParameters)
    }

    /// Whether the radio link of the central's connection `handle` has been lost (waiting for its
    /// supervision timeout) or is gone.
    func isLinkLost(centralHandle handle: UInt16) -> Bool {
        link.connections.first { $0.centralHandle == handle }?.isLost ?? true
    }

    /// Waits until nothing moves without virtual time: each host has taken and acted on every packet
    /// its controller delivered, and handed its controller every packet it queued (none is still in
    /// its writer task), so every ACL packet it has not seen completed is in its controller's buffers;
    /// and `condition` holds.
    ///
    /// Only then may a test advance the clock: a packet a host sent before it could know the link was
    /// gone must not reach the controller after the handle was freed. The wait wakes on `signal`
    /// (`BenchSignal`): the transports report every step of the hosts' packets, the hosts every drain,
    /// and the tests' flags their changes, so the condition is re-checked when it may have changed and
    /// at no other time.
    func settleQuiet(_ what: String, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () async -> Bool = { true }) async throws {
        try await settle(what, on: signal, sourceLocation: sourceLocation) {
            // Read before the diagnostics: a host handles a packet in the same actor job that takes it.
            guard centralTransport.isQuiet && peripheralTransport.isQuiet else { return false }
            let c = await central.diagnostics.aclPacketsInFlight, p = await peripheral.diagnostics.aclPacketsInFlight
            guard c == centralController.aclBuffersInUse, p == peripheralController.aclBuffersInUse else { return false }
            return await condition()
        }
    }

    /// Waits until both hosts hold nothing for any connection and no host timer sleeps on the clock,
    /// re-checking at each poke of `signal`: the hosts' drains, a GATT session's release (which makes
    /// its host re-check its counts) and every sleeper that comes or goes (`TestClock.onSleepersChanged`).
    func expectNothingLeaks(_ context: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let central = self.central, peripheral = self.peripheral, clock = self.clock
        let clean = await settleOrReport(signal) {
            let c = await central.diagnostics, p = await peripheral.diagnostics
            return c.holdsNoConnectionState && c.liveGATTSessions == 0
                && p.holdsNoConnectionState && p.liveGATTSessions == 0 && clock.sleeperCount == 0
        }
        if !clean {
            Issue.record(
                """
                \(context): state left behind
                central: \(await central.diagnostics)
                peripheral: \(await peripheral.diagnostics)
                clock sleepers: \(clock.sleeperCount)
                """, sourceLocation: sourceLocation)
        }
        #expect(centralController.violations.isEmpty, "\(context): \(centralController.violations)", sourceLocation: sourceLocation)
        #expect(peripheralController.violations.isEmpty, "\(context): \(peripheralController.violations)", sourceLocation: sourceLocation)
    }

    func close() async {
        await central.close()
        await peripheral.close()
    }
}

/// `VirtualTransport`, following each packet from the controller through the Host and back
/// (`HostActivityObservingTransport`), so that a test can tell when a host has handled everything
/// (`FaultBench.settleQuiet`); every step pokes `signal`.
final class ObservedVirtualTransport: HostActivityObservingTransport {
    let controller: VirtualController
    let inbound: HCIInboundPackets
    let signal: BenchSignal
    private let continuation: HCIInboundPackets.Continuation
    private struct Counts {
        var delivered = 0
        var taken = 0
        var closed = false
        /// The host reports its activity (it opened): until then, taking a packet is acting on it.
        var reporting = false
        /// The host took packets and has not yet said it acted on them.
        var unacted = false
        /// Packets the host queued for `send` and has not handed off.
        var queued = 0
    }

    private final class Box: Sendable {
        let counts = Mutex(Counts())
    }

    private let box = Box()

    init(controller: VirtualController, signal: BenchSignal = BenchSignal()) {
        self.controller = controller
        self.signal = signal
        let (packets, continuation) = HCIInboundPackets.makeStream()
        self.continuation = continuation
        let box = self.box
        inbound = packets.observing { _ in
            box.counts.withLock { counts in
                counts.taken += 1
                if counts.reporting { counts.unacted = true }
            }
            signal.poke()
        }
        controller.setOutputHandler { packet in
            box.counts.withLock { $0.delivered += 1 }
            continuation.yield(packet)
            signal.poke()
        }
    }

    /// Whether the host has taken and acted on every packet delivered so far, and handed off every
    /// packet it queued.
    var isQuiet: Bool {
        box.counts.withLock { $0.delivered == $0.taken && !$0.unacted && $0.queued == 0 }
    }

    func hostReportsActivity() { box.counts.withLock { $0.reporting = true } }

    func hostActedOnInbound() {
        box.counts.withLock { $0.unacted = false }
        signal.poke()
    }

    func hostQueuedPacket() {
        box.counts.withLock { $0.queued += 1 }
        signal.poke()
    }

    func hostHandedOffPacket() {
        box.counts.withLock { $0.queued -= 1 }
        signal.poke()
    }

    func send(_ packet: HCIPacket) async throws(TransportError) {
        guard !box.counts.withLock({ $0.closed }) else { throw .closed }
        controller.receive(hostPacket: packet)
    }

    func close() async {
        let first = box.counts.withLock { counts in
            defer { counts.closed = true }
            return !counts.closed
        }
        guard first else { return }
        controller.setOutputHandler(nil)
        continuation.finish()
    }
}

/// The peripheral's database: a name, a notifying counter, a writable 300-byte value, a 512-byte
/// value (read in one PDU only after an MTU exchange, and then in three ACL fragments), and a
/// second service including the first, with a descriptor.
struct FaultDatabase {
    static let service = BluetoothUUID(0xFA00)
    static let otherService = BluetoothUUID(0xFB00)
    let database: GATTDatabase
    let name: GATTCharacteristicHandles
    let counter: GATTCharacteristicHandles
    let long: GATTCharacteristicHandles
    let huge: GATTCharacteristicHandles
    let control: GATTCharacteristicHandles
    let longValue: [UInt8]

    init() throws {
        var builder = GATTDatabaseBuilder()
        longValue = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }
        try builder.addService(.genericAccess)
        name = try builder.addCharacteristic(.deviceName, properties: [.read], permissions: [.read], value: .cached(Array("Fault bench".utf8)))
        let main = try builder.addService(Self.service)
        counter = try builder.addCharacteristic(
            BluetoothUUID(0xFA01), properties: [.read, .notify], permissions: [.read], value: .cached([0]))
        long = try builder.addCharacteristic(
            BluetoothUUID(0xFA02), properties: [.read, .write], permissions: [.read, .write], value: .cached(longValue))
        huge = try builder.addCharacteristic(
            BluetoothUUID(0xFA03), properties: [.read], permissions: [.read],
            value: .cached((0..<512).map { UInt8(truncatingIfNeeded: $0 &* 3) }))
        try builder.addService(Self.otherService)
        try builder.addIncludedService(main)
        control = try builder.addCharacteristic(
            BluetoothUUID(0xFB01), properties: [.read, .write, .writeWithoutResponse], permissions: [.read, .write], value: .cached([0]))
        try builder.addDescriptor(.characteristicUserDescription, permissions: [.read], value: .cached(Array("control".utf8)))
        database = builder.build()
    }
}

/// A flag a task sets when it ends, readable without awaiting the task; setting it pokes `signal`
/// (a bench's, when a wait reads the flag).
final class Completion: Sendable {
    private let done = Mutex(false)
    let signal: BenchSignal?
    init(signal: BenchSignal? = nil) { self.signal = signal }
    var isDone: Bool { done.withLock { $0 } }
    func finish() {
        done.withLock { $0 = true }
        signal?.poke()
    }
}
