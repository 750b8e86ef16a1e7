@_spi(Testing) import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireTesting
import Synchronization
import Testing

/// The radio link is lost after the k-th ACL packet of a GATT procedure, for every k the procedure
/// uses, in each direction (the central's requests, the peripheral's responses and notifications,
/// counted as the HCI ACL packets each host hands its controller, so a drop can fall between the
/// fragments of one PDU). The count comes from a clean run first.
///
/// For each k: the procedure and an operation queued behind it fail with Connection Timeout (0x08)
/// exactly when the supervision timeout expires in virtual time; the state machine ends in
/// Disconnected.Initial; neither host holds anything for the connection afterwards (links, waiters,
/// subscribers, queued packets, partial PDUs, server state, timers, live objects); and the procedure
/// then completes on a new connection with the same result as the clean run.
@Suite("Fault injection: the link drops after every ACL packet of a procedure", .timeLimit(.minutes(1)))
struct FaultInjectionLinkLossTests {
    enum Side: String, CaseIterable, Sendable {
        case central, peripheral
    }

    /// What a procedure obtained, to compare a run after a reconnection with the clean run.
    enum Outcome: Hashable, Sendable {
        case dump(GATTDump)
        /// The value the peripheral holds after the write.
        case written([UInt8])
        case notified([[UInt8]])
    }

    /// One run of a procedure: the value it writes, what it received before it ended, and whether
    /// it has sent everything and only waits for notifications.
    final class Attempt: Sendable {
        let value: [UInt8]
        private let received = Mutex<[[UInt8]]>([])
        private let waiting = Mutex(false)
        /// Poked when the procedure starts waiting for notifications (a bench wait reads that).
        let signal: BenchSignal?
        init(value: [UInt8], signal: BenchSignal? = nil) {
            self.value = value
            self.signal = signal
        }
        func record(_ value: [UInt8]) { received.withLock { $0.append(value) } }
        var receivedSoFar: [[UInt8]] { received.withLock { $0 } }
        func waitsForNotifications() {
            waiting.withLock { $0 = true }
            signal?.poke()
        }
        var isWaitingForNotifications: Bool { waiting.withLock { $0 } }
    }

    struct Procedure: Sendable, CustomTestStringConvertible {
        var name: String
        var centralMTU: UInt16
        var run: @Sendable (Connection, FaultBench, Attempt) async throws -> Outcome
        var testDescription: String { name }
    }

    /// Notifications the peripheral sends as soon as the counter is subscribed to.
    static let notificationCount = 8

    static let procedures: [Procedure] = [
        // MTU exchange, then discovery of everything and a read of every readable value: the 512-byte
        // value comes back in one Read Response of three ACL fragments.
        Procedure(name: "full GATT dump", centralMTU: 517) { connection, _, _ in
            let gatt = await connection.gatt
            try await gatt.exchangeMTU()
            return .dump(try await gatt.dump())
        },
        // At the default ATT_MTU of 23, 300 bytes are 17 Prepare Write Requests and an Execute Write.
        Procedure(name: "long write of 300 bytes", centralMTU: 517) { connection, bench, attempt in
            let gatt = await connection.gatt
            let characteristic = try await discover(BluetoothUUID(0xFA02), gatt)
            try await gatt.write(attempt.value, to: characteristic)
            return .written(await bench.peripheral.value(of: bench.fixture.long.valueHandle))
        },
        // Discovery, the CCCD found with Find Information and written, then the peripheral notifies.
        Procedure(name: "subscription with notifications", centralMTU: 517) { connection, bench, attempt in
            let gatt = await connection.gatt
            let counter = try await discover(BluetoothUUID(0xFA01), gatt)
            let subscription = try await gatt.subscribe(to: counter)
            for i in 1...notificationCount {
                _ = try await bench.peripheral.notify(counter.valueHandle, value: [UInt8(i), 0xC0])
            }
            attempt.waitsForNotifications()
            var values: [[UInt8]] = []
            for try await notification in subscription {
                values.append(Array(notification.value))
                attempt.record(Array(notification.value))
                if values.count == notificationCount { break }
            }
            return .notified(values)
        },
    ]

    static func discover(_ uuid: BluetoothUUID, _ gatt: GATTClient) async throws -> GATTCharacteristic {
        let service = try #require(try await gatt.discoverServices(uuid: FaultDatabase.service).first)
        return try #require(try await gatt.discoverCharacteristics(of: service).first { $0.uuid == uuid })
    }

    static func value(forAttempt k: Int, _ side: Side) -> [UInt8] {
        (0..<300).map { UInt8(truncatingIfNeeded: $0 &+ k &* 31 &+ (side == .central ? 7 : 11)) }
    }

    @Test("every pending operation fails with Connection Timeout within the supervision timeout, nothing leaks, a reconnection works", arguments: procedures)
    func dropAfterEveryPacket(_ procedure: Procedure) async throws {
        let bench = try await FaultBench.make(centralMTU: procedure.centralMTU)
        // The clean run: what the procedure obtains, and how many ACL packets each host sends for it.
        let clean = try await Self.measure(procedure, bench)
        #expect(clean.packets[.central]! > 0 && clean.packets[.peripheral]! > 0)
        try await bench.expectNothingLeaks("after the clean run")

        for side in Side.allCases {
            for k in 1...clean.packets[side]! {
                let context = "\(procedure.name), link lost after \(side) ACL packet \(k) of \(clean.packets[side]!)"
                let completes = side == .peripheral && k == clean.packets[side]!
                try await Self.dropLink(after: k, on: side, procedure, bench, clean: clean.outcome, completes: completes, context)
                try await bench.expectNothingLeaks(context)
                try await Self.reconnectAndRun(procedure, bench, k: k, side: side, clean: clean.outcome, context)
                try await bench.expectNothingLeaks("\(context), after the reconnection")
            }
        }
        await bench.close()
    }

    /// Runs the procedure once without faults, counting the ACL packets of each host.
    static func measure(_ procedure: Procedure, _ bench: FaultBench) async throws -> (outcome: Outcome, packets: [Side: Int]) {
        let connection = try await bench.connect()
        let unlimited = 1_000_000
        bench.centralController.faults.dropLinkAfterACLPackets = unlimited
        bench.peripheralController.faults.dropLinkAfterACLPackets = unlimited
        let outcome = try await procedure.run(connection, bench, Attempt(value: value(forAttempt: 0, .central)))
        let packets: [Side: Int] = [
            .central: unlimited - (bench.centralController.faults.dropLinkAfterACLPackets ?? unlimited),
            .peripheral: unlimited - (bench.peripheralController.faults.dropLinkAfterACLPackets ?? unlimited),
        ]
        bench.centralController.faults.dropLinkAfterACLPackets = nil
        bench.peripheralController.faults.dropLinkAfterACLPackets = nil
        try await connection.disconnect()
        return (outcome, packets)
    }

    static func dropLink(
        after k: Int, on side: Side, _ procedure: Procedure, _ bench: FaultBench, clean: Outcome, completes: Bool,
        _ context: String
    ) async throws {
        let connection = try await bench.connect()
        let gatt = await connection.gatt
        let transitions = gatt.transitions()
        let valueBefore = await bench.peripheral.value(of: bench.fixture.long.valueHandle)
        let attempt = Attempt(value: value(forAttempt: k, side), signal: bench.signal)
        (side == .central ? bench.centralController : bench.peripheralController).faults.dropLinkAfterACLPackets = k
        let start = bench.clock.monotonicNow
        let done = Completion(signal: bench.signal)
        let running = Task {
            defer { done.finish() }
            return try await procedure.run(connection, bench, attempt)
        }
        await bench.link.waitForLinkLoss(centralHandle: connection.handle)
        try await bench.settleQuiet("\(context): the procedure waits") {
            let waiters = await bench.central.diagnostics.requestWaiters
            return done.isDone || attempt.isWaitingForNotifications || waiters == 1
        }
        // Other callers' operations, submitted (in this order) while the link is dead but not yet known
        // to be: they wait behind the procedure, or send into the void, until the supervision timeout.
        let queuedRead = await gatt.queue.submit(ProcedureOperation { _ in ReadCharacteristicValue(handle: bench.fixture.name.valueHandle) })
        let queuedWrite = await gatt.queue.submit(WriteWithoutResponseOperation(handle: bench.fixture.control.valueHandle, value: [1]))
        // Nothing moves until the clock does: packets the hosts sent before they could know the link
        // was lost are in their controllers, as they would be on a UART, before the handles are freed.
        try await bench.settleQuiet("\(context): one request waits for its response") {
            await bench.central.diagnostics.requestWaiters == 1
        }

        // Connection Timeout is declared when the supervision timeout expires, and not before.
        await bench.clock.advance(to: start + TimeSpan(microseconds: FaultBench.supervisionTimeout.microseconds - 1))
        #expect(!done.isDone || completes, "\(context): the procedure ended before the supervision timeout")
        await bench.clock.advance(to: start + FaultBench.supervisionTimeout)
        // The procedure and the queued operations end, each awaited, without moving time again.
        let result = await running.result
        var queuedOutcomes: [(String, HCIStatus?, String)] = []
        for (name, operation) in [("read", queuedRead.outcome), ("write", queuedWrite.outcome)] {
            let (reason, error) = await operation()
            queuedOutcomes.append((name, reason, "\(error)"))
        }
        #expect(bench.clock.monotonicNow == start + FaultBench.supervisionTimeout, "\(context): needed more virtual time")

        let lost = GATTError.disconnected(.connectionTimeout)
        if completes {
            let expected: Outcome = if case .written = clean { .written(attempt.value) } else { clean }
            #expect(try result.get() == expected, "\(context): the last packet arrived, so the procedure completes")
        } else {
            #expect(throws: lost, "\(context)") { try result.get() }
        }
        for (name, reason, error) in queuedOutcomes {
            #expect(reason == .connectionTimeout, "\(context): the queued \(name) must fail with the disconnection, not \(error)")
        }

        var last: ConnectionTransition?
        for await transition in transitions { last = transition }
        #expect(last?.trigger == .disconnect && last?.to == .initial, "\(context): \(String(describing: last))")
        #expect(gatt.state == .initial, "\(context)")
        #expect(gatt.disconnectionReason == .connectionTimeout, "\(context)")
        #expect(await connection.isConnected == false, "\(context)")
        #expect(await bench.central.connections.isEmpty, "\(context)")
        try await bench.peripheral.until("\(context): the peripheral sees the disconnection") { $0.links == 0 }

        switch clean {
        case .written:
            // Prepared writes are applied by Execute Write only: all of the value or nothing.
            let after = await bench.peripheral.value(of: bench.fixture.long.valueHandle)
            #expect(after == valueBefore || after == attempt.value, "\(context): a partial value was written")
        case .notified(let all):
            let received = attempt.receivedSoFar
            #expect(Array(all.prefix(received.count)) == received, "\(context): notifications lost or out of order")
        case .dump:
            break
        }
    }

    static func reconnectAndRun(
        _ procedure: Procedure, _ bench: FaultBench, k: Int, side: Side, clean: Outcome, _ context: String
    ) async throws {
        let connection = try await bench.connect()
        let attempt = Attempt(value: value(forAttempt: k + 1000, side), signal: bench.signal)
        let outcome = try await procedure.run(connection, bench, attempt)
        switch clean {
        case .written: #expect(outcome == .written(attempt.value), "\(context): after reconnecting")
        default: #expect(outcome == clean, "\(context): after reconnecting")
        }
        try await connection.disconnect()
    }
}

extension QueuedOperation {
    /// The disconnection reason the operation failed with; nil if it succeeded or failed otherwise.
    var outcome: @Sendable () async -> (HCIStatus?, String) {
        {
            do {
                _ = try await self.value
                return (nil, "success")
            } catch {
                return (await disconnectionReason { throw error }, "\(error)")
            }
        }
    }
}

/// The HCI reason of a disconnection error, as the Host, the GATT client and the queue report it.
func disconnectionReason(_ body: () async throws -> Void) async -> HCIStatus? {
    do {
        try await body()
        return nil
    } catch let error as GATTError {
        if case .disconnected(let reason) = error { return reason }
    } catch let error as ConnectionError {
        if case .disconnected(let reason) = error { return reason }
    } catch let error as RemotePeripheralError {
        if case .disconnected(let reason) = error { return reason }
    } catch {}
    return nil
}

extension BluetoothHost {
    /// The cached value of `handle` in the served database (empty if none).
    func value(of handle: UInt16) -> [UInt8] {
        guard let index = database.index(of: handle) else { return [] }
        return database.attributes[index].cachedValue ?? []
    }
}
