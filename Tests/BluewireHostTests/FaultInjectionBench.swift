@_spi(Testing) import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireTesting
import BluewireTransport
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

    static func make(
        commandTimeout: TimeSpan = .seconds(2), centralMTU: UInt16 = 517
    ) async throws -> FaultBench {
        let clock = TestClock()
        let link = VirtualLink(clock: clock, timing: .immediate)
        let centralController = link.addController(publicAddress: VirtualAddress.centralPublic)
        let peripheralController = link.addController(publicAddress: VirtualAddress.peripheralPublic)
        let centralTransport = ObservedVirtualTransport(controller: centralController)
        let peripheralTransport = ObservedVirtualTransport(controller: peripheralController)
        let central = BluetoothHost(
            transport: centralTransport,
            configuration: HostConfiguration(
                randomAddress: centralAddress, commandTimeout: commandTimeout, preferredMTU: centralMTU),
            clock: clock, logger: .provokedFailure)
        let peripheral = BluetoothHost(
            transport: peripheralTransport,
            configuration: HostConfiguration(randomAddress: peripheralAddress, commandTimeout: commandTimeout),
            clock: clock, logger: .provokedFailure)
        try await central.start()
        try await peripheral.start()
        let fixture = try FaultDatabase()
        await peripheral.setDatabase(fixture.database)
        _ = try await peripheral.startAdvertising(try Advertisement(name: "Faults", services: [FaultDatabase.service]))
        return FaultBench(
            clock: clock, link: link, centralController: centralController, peripheralController: peripheralController,
            central: central, peripheral: peripheral, centralTransport: centralTransport,
            peripheralTransport: peripheralTransport, fixture: fixture)
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

    /// Waits until nothing moves without virtual time: each host has handled every packet its
    /// controller delivered, every ACL packet it handed out (and has not seen completed) is in its
    /// controller's buffers (none is still in its writer task), and `condition` holds.
    ///
    /// Only then may a test advance the clock: a packet a host sent before it could know the link was
    /// gone must not reach the controller after the handle was freed.
    func settleQuiet(_ what: String, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () async -> Bool = { true }) async throws {
        try await settle(what, sourceLocation: sourceLocation) {
            // Read before the diagnostics: a host handles a packet in the same actor job that takes it.
            let handled = centralTransport.isDrained && peripheralTransport.isDrained
            let c = await central.diagnostics.aclPacketsInFlight, p = await peripheral.diagnostics.aclPacketsInFlight
            guard handled, c == centralController.aclBuffersInUse, p == peripheralController.aclBuffersInUse else { return false }
            return await condition()
        }
    }

    /// Waits until both hosts hold nothing for any connection and no host timer sleeps on the clock.
    func expectNothingLeaks(_ context: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let central = self.central, peripheral = self.peripheral, clock = self.clock
        let clean = await settleOrReport {
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

/// `VirtualTransport`, counting the packets the controller delivered and the packets the Host took,
/// so that a test can tell when a host has handled everything (`FaultBench.settleQuiet`).
final class ObservedVirtualTransport: HCITransport {
    let controller: VirtualController
    let inbound: HCIInboundPackets
    private let continuation: HCIInboundPackets.Continuation
    private final class Counts: Sendable {
        let state = Mutex((delivered: 0, taken: 0, closed: false))
    }

    private let counts = Counts()

    init(controller: VirtualController) {
        self.controller = controller
        let (packets, continuation) = HCIInboundPackets.makeStream()
        self.continuation = continuation
        let counts = self.counts
        inbound = packets.observing { _ in counts.state.withLock { $0.taken += 1 } }
        controller.setOutputHandler { packet in
            counts.state.withLock { $0.delivered += 1 }
            continuation.yield(packet)
        }
    }

    /// Whether the consumer has taken every packet delivered so far.
    var isDrained: Bool { counts.state.withLock { $0.delivered == $0.taken } }

    func send(_ packet: HCIPacket) async throws(TransportError) {
        guard !counts.state.withLock({ $0.closed }) else { throw .closed }
        controller.receive(hostPacket: packet)
    }

    func close() async {
        let first = counts.state.withLock { counts in
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

/// A flag a task sets when it ends, readable without awaiting the task.
final class Completion: Sendable {
    private let done = Mutex(false)
    var isDone: Bool { done.withLock { $0 } }
    func finish() { done.withLock { $0 = true } }
}

/// Waits, without moving virtual time, until `condition` holds: the hosts, operation queues and
/// streams run on other tasks, so this yields to them, and only if they take long naps 1 ms of wall
/// time. Returns false after 10 s of wall time.
func settleOrReport(_ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(10)
    var rounds = 0
    while !(await condition()) {
        guard ContinuousClock.now < deadline else { return false }
        rounds += 1
        if rounds < 64 {
            await Task.yield()
        } else {
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
    return true
}

/// `settleOrReport`, recording an issue naming `what` (and throwing) if the condition never holds.
func settle(
    _ what: String, sourceLocation: SourceLocation = #_sourceLocation, until condition: () async -> Bool
) async throws {
    guard await settleOrReport(condition) else {
        Issue.record("never happened: \(what)", sourceLocation: sourceLocation)
        throw CancellationError()
    }
}
